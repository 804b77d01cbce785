extends Node
## Validator of the task "squash-collision-layers": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "layers named player/enemies/world; player 1 -> 2+3, mob 2 -> none"


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
	var names = ["player", "enemies", "world"]
	for i in 3:
		var n = ProjectSettings.get_setting("layer_names/3d_physics/layer_%d" % (i + 1), "")
		if n != names[i]:
			return "3D physics layer %d is named %s, not %s" % [i + 1, n, names[i]]
	var p = inst("res://player.tscn")
	var m = inst("res://mob.tscn")
	if p == null or m == null:
		return "player.tscn or mob.tscn does not load"
	if p.collision_layer != 1 or p.collision_mask != 6:
		return "the player has layer %d mask %d, not layer 1 (player) mask 6 (enemies, world)" % [p.collision_layer, p.collision_mask]
	if m.collision_layer != 2 or m.collision_mask != 0:
		return "the mob has layer %d mask %d, not layer 2 (enemies) mask 0" % [m.collision_layer, m.collision_mask]
	return ""
