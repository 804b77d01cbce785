extends Node
## Validator of the task "signals-health": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "take_damage lowers health to 0 at most, emits health_changed(new) and died once"


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
	for s in ["health_changed", "died"]:
		if not p.has_signal(s):
			return "the player has no %s signal" % s
	if not p.has_method("take_damage"):
		return "the player has no take_damage method"
	var changes = []
	var deaths = [0]
	p.connect("health_changed", func(v): changes.append(v))
	p.connect("died", func(): deaths[0] += 1)
	p.take_damage(30)
	if p.health != 70 or changes != [70]:
		return "take_damage(30) from 100: health %s, health_changed %s; want 70 and [70]" % [p.health, changes]
	if deaths[0] != 0:
		return "died was emitted at 70 health"
	p.take_damage(100)
	if p.health != 0 or changes.back() != 0:
		return "take_damage(100) at 70: health %s, last health_changed %s; want 0" % [p.health, changes.back()]
	p.take_damage(10)
	if p.health != 0:
		return "health went below 0 (%s)" % p.health
	if deaths[0] != 1:
		return "died was emitted %d times, not once" % deaths[0]
	return ""
