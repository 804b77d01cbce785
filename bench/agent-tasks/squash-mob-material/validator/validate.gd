extends Node
## Validator of the task "squash-mob-material": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "Body renders with a #d9594c StandardMaterial3D, roughness 0.4, emission 0.5"


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
	var body = m.get_node_or_null("Body")
	if not body is MeshInstance3D:
		return "the mob has no MeshInstance3D named Body"
	var mat = body.get_active_material(0)
	if not mat is StandardMaterial3D:
		return "Body's surface has no StandardMaterial3D (it has %s)" % [mat]
	var red = Color("#d9594c")
	if not near(mat.albedo_color, red, 0.01):
		return "the albedo is %s, not #d9594c" % mat.albedo_color.to_html()
	if not near(mat.roughness, 0.4):
		return "the roughness is %s, not 0.4" % mat.roughness
	if not mat.emission_enabled or not near(mat.emission, red, 0.01) or not near(mat.emission_energy_multiplier, 0.5):
		return "emission is not on in #d9594c at energy 0.5 (on %s, %s, %s)" % [mat.emission_enabled, mat.emission.to_html(), mat.emission_energy_multiplier]
	return ""
