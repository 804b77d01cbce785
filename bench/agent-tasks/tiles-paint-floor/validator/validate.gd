extends Node
## Validator of the task "tiles-paint-floor": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "row 10 from 0 to 19 is grass, walls at (0,9) and (19,9), nothing else"


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
	var lvl = inst("res://level.tscn")
	if lvl == null:
		return "res://level.tscn does not load as a scene"
	var ground = lvl.get_node_or_null("Ground")
	if not ground is TileMapLayer:
		return "no TileMapLayer named Ground"
	for x in 20:
		var c = Vector2i(x, 10)
		if ground.get_cell_source_id(c) != 0 or ground.get_cell_atlas_coords(c) != Vector2i(0, 0):
			return "cell %s holds source %d atlas %s, not grass (0, (0, 0))" % [c, ground.get_cell_source_id(c), ground.get_cell_atlas_coords(c)]
	for c in [Vector2i(0, 9), Vector2i(19, 9)]:
		if ground.get_cell_source_id(c) != 0 or ground.get_cell_atlas_coords(c) != Vector2i(1, 0):
			return "cell %s is not the wall tile (0, (1, 0))" % [c]
	var used = ground.get_used_cells().size()
	if used != 22:
		return "%d cells are painted, not 22" % used
	return ""
