extends Node
## Validator of the task "tiles-collision": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "a physics layer on collision layer 1; tile (0,0) has a full-tile polygon; a body lands on the floor"


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
	if not ground is TileMapLayer or ground.tile_set == null:
		return "Ground is not a TileMapLayer with a TileSet"
	var ts: TileSet = ground.tile_set
	if ts.get_physics_layers_count() < 1:
		return "the TileSet has no physics layer"
	if ts.get_physics_layer_collision_layer(0) & 1 == 0:
		return "physics layer 0 is not on collision layer 1"
	var src = ts.get_source(0)
	var data = src.get_tile_data(Vector2i(0, 0), 0)
	if data.get_collision_polygons_count(0) < 1:
		return "tile (0, 0) has no collision polygon"
	var pts = data.get_collision_polygon_points(0, 0)
	var area = 0.0
	for i in pts.size():
		var a = pts[i]
		var b = pts[(i + 1) % pts.size()]
		area += a.x * b.y - b.x * a.y
	if absf(area / 2.0) < 250:
		return "tile (0, 0)'s polygon covers %s px^2, not the whole 16x16 tile" % absf(area / 2.0)
	var wall = src.get_tile_data(Vector2i(1, 0), 0)
	if wall.get_collision_polygons_count(0) > 0:
		return "the wall tile (1, 0) has a collision polygon too"
	await physics_frames(3)
	var space = ground.get_world_2d().direct_space_state
	var at = ground.to_global(ground.map_to_local(Vector2i(5, 10)))
	var hit = space.intersect_ray(PhysicsRayQueryParameters2D.create(at + Vector2(0, -100), at + Vector2(0, 100)))
	if hit.is_empty() or not near(hit.position.y, at.y - 8, 1.0):
		return "a ray cast down onto cell (5, 10) does not hit its top (hit %s)" % [hit]
	return ""
