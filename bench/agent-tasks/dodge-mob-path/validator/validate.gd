extends Node
## Validator of the task "dodge-mob-path": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "MobPath goes clockwise around the 480x720 screen, closed, with MobSpawnLocation"


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
	var main = inst("res://main.tscn")
	if main == null:
		return "res://main.tscn does not load as a scene"
	var path = main.get_node_or_null("MobPath")
	if not path is Path2D or path.curve == null:
		return "Main has no Path2D named MobPath with a curve"
	var c: Curve2D = path.curve
	if c.point_count < 5:
		return "the curve has %d points; four corners and the closing point make five" % c.point_count
	var pts = []
	for i in c.point_count:
		pts.append(c.get_point_position(i))
	for corner in [Vector2(0, 0), Vector2(480, 0), Vector2(480, 720), Vector2(0, 720)]:
		if not pts.any(func(p): return p.distance_to(corner) < 2.0):
			return "no curve point at the corner %s (points: %s)" % [corner, pts]
	if pts[0].distance_to(pts[-1]) > 2.0:
		return "the curve is not closed: it starts at %s and ends at %s" % [pts[0], pts[-1]]
	var area = 0.0
	for i in pts.size() - 1:
		area += pts[i].x * pts[i + 1].y - pts[i + 1].x * pts[i].y
	if area <= 0:
		return "the curve runs counter-clockwise on screen"
	var follow = path.get_node_or_null("MobSpawnLocation")
	if not follow is PathFollow2D:
		return "MobPath has no PathFollow2D child named MobSpawnLocation"
	return ""
