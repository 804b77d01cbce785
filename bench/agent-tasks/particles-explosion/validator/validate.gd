extends Node
## Validator of the task "particles-explosion": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "Burst: 32 particles, one shot, explosive, 0.6 s, spread 180, 100-150 px/s, no gravity"


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
	var e = inst("res://explosion.tscn")
	if e == null:
		return "res://explosion.tscn does not load as a scene"
	var p = e.get_node_or_null("Burst")
	if not p is GPUParticles2D:
		return "no GPUParticles2D named Burst"
	if p.amount != 32 or not p.one_shot or not near(p.explosiveness, 1.0) or not near(p.lifetime, 0.6):
		return "Burst: amount %d, one_shot %s, explosiveness %s, lifetime %s; want 32, true, 1, 0.6" % [p.amount, p.one_shot, p.explosiveness, p.lifetime]
	if p.emitting:
		return "Burst emits as soon as the scene loads"
	var m = p.process_material
	if not m is ParticleProcessMaterial:
		return "Burst has no ParticleProcessMaterial"
	if not near(m.spread, 180.0):
		return "the spread is %s degrees, not 180" % m.spread
	if not near(m.initial_velocity_min, 100.0) or not near(m.initial_velocity_max, 150.0):
		return "the initial velocity is %s to %s, not 100 to 150" % [m.initial_velocity_min, m.initial_velocity_max]
	if not near(m.gravity, Vector3.ZERO):
		return "the gravity is %s, not zero" % [m.gravity]
	return ""
