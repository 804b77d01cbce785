extends Node
## Validator of the task "scripts-class-name": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "class Inventory is registered; starter_inventory.tres holds sword, shield; add_item counts"


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
	var found = ""
	for c in ProjectSettings.get_global_class_list():
		if c["class"] == &"Inventory":
			found = c["path"]
	if found != "res://inventory.gd":
		return "no global class Inventory in res://inventory.gd (found %s)" % [found]
	if not ResourceLoader.exists("res://starter_inventory.tres"):
		return "res://starter_inventory.tres does not exist"
	var inv = load("res://starter_inventory.tres")
	if inv == null or inv.get_script() == null or inv.get_script().get_global_name() != &"Inventory":
		return "starter_inventory.tres is not an Inventory"
	if Array(inv.items) != ["sword", "shield"]:
		return "the starter inventory holds %s, not [sword, shield]" % [inv.items]
	var fresh = load("res://inventory.gd").new()
	if fresh.add_item("bow") != 1 or fresh.add_item("arrow") != 2:
		return "add_item does not return the new count"
	return ""
