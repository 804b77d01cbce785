extends Node
## Validator of the task "dodge-mob-scene": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "mob.tscn: RigidBody2D without gravity, capsule, screen_exited frees it"


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
	var m = inst("res://mob.tscn")
	if m == null:
		return "res://mob.tscn does not load as a scene"
	if not m is RigidBody2D or m.name != "Mob":
		return "the root is %s named %s, not a RigidBody2D named Mob" % [m.get_class(), m.name]
	if m.get_script() == null or m.get_script().resource_path != "res://mob.gd":
		return "the root's script is not res://mob.gd"
	if not near(m.gravity_scale, 0.0):
		return "gravity_scale is %s, not 0" % m.gravity_scale
	var shape = find(m, "CollisionShape2D")
	if shape == null or not shape.shape is CapsuleShape2D:
		return "no CollisionShape2D with a CapsuleShape2D"
	var notifier = find(m, "VisibleOnScreenNotifier2D")
	if notifier == null:
		return "no VisibleOnScreenNotifier2D"
	notifier.screen_exited.emit()
	if not m.is_queued_for_deletion():
		return "screen_exited did not free the mob"
	return ""
