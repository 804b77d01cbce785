extends Node
## Validator of the task "dodge-player-scene": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "player.tscn: Area2D Player, Sprite2D with player.svg at 0.5, capsule 27x68"


func _ready() -> void:
	var why: String = await check()
	if why == "":
		print("PASSED: " + PASS_WHY)
	else:
		print("FAILED: " + why)
	get_tree().quit(0)


## The scene at `path`, instanced and added under the validator (null if it does not load).
func inst(path: String) -> Node:
	if not ResourceLoader.exists(path):
		return null
	var packed = load(path)
	if not packed is PackedScene:
		return null
	var node = packed.instantiate()
	if node != null:
		add_child(node)
	return node


## The first node under `root` (root included) of class `cls`, or named `name` if given.
func find(root: Node, cls: String, name: String = "") -> Node:
	if root == null:
		return null
	if root.is_class(cls) and (name == "" or root.name == name):
		return root
	for child in root.get_children():
		var hit = find(child, cls, name)
		if hit != null:
			return hit
	return null


func near(a, b, eps: float = 0.01) -> bool:
	if typeof(a) in [TYPE_FLOAT, TYPE_INT] and typeof(b) in [TYPE_FLOAT, TYPE_INT]:
		return absf(float(a) - float(b)) <= eps
	if typeof(a) != typeof(b):
		return false
	if a is Color:
		return absf(a.r - b.r) <= eps and absf(a.g - b.g) <= eps and absf(a.b - b.b) <= eps and absf(a.a - b.a) <= eps
	return a.distance_to(b) <= eps


func frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func physics_frames(n: int) -> void:
	for i in n:
		await get_tree().physics_frame


## Whether `signal_name` of `from` is connected to a method named `method` on `to`.
func connected(from: Object, signal_name: String, to: Object, method: String) -> bool:
	if from == null or to == null or not from.has_signal(signal_name):
		return false
	for c in from.get_signal_connection_list(signal_name):
		var callable: Callable = c["callable"]
		if callable.get_object() == to and callable.get_method() == method:
			return true
	return false


# ---- the task's own check ----------------------------------------------------------

func check() -> String:
	await frames(1)
	var p = inst("res://player.tscn")
	if p == null:
		return "res://player.tscn does not load as a scene"
	if not p is Area2D or p.name != "Player":
		return "the root is %s named %s, not an Area2D named Player" % [p.get_class(), p.name]
	var sprite = find(p, "Sprite2D")
	if sprite == null:
		return "no Sprite2D in the player"
	if sprite.texture == null or sprite.texture.resource_path != "res://art/player.svg":
		return "the Sprite2D's texture is not res://art/player.svg (%s)" % [sprite.texture]
	if not near(sprite.scale, Vector2(0.5, 0.5)):
		return "the Sprite2D's scale is %s, not (0.5, 0.5)" % [sprite.scale]
	var shape = find(p, "CollisionShape2D")
	if shape == null or not shape.shape is CapsuleShape2D:
		return "no CollisionShape2D with a CapsuleShape2D"
	if not near(shape.shape.radius, 27.0) or not near(shape.shape.height, 68.0):
		return "the capsule is radius %s height %s, not 27 and 68" % [shape.shape.radius, shape.shape.height]
	return ""
