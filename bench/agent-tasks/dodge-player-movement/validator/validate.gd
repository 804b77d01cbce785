extends Node
## Validator of the task "dodge-player-movement": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "the player moves at speed, diagonals normalized, clamped to the screen"


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
	p.set_process(false)
	p.position = Vector2(240, 360)
	Input.action_press("move_right")
	p._process(0.1)
	Input.action_release("move_right")
	if not near(p.position, Vector2(280, 360), 0.5):
		return "after 0.1 s of move_right from (240, 360) the player is at %s, not (280, 360)" % [p.position]
	p.position = Vector2(240, 360)
	Input.action_press("move_up")
	Input.action_press("move_left")
	p._process(0.1)
	Input.action_release("move_up")
	Input.action_release("move_left")
	var moved = p.position.distance_to(Vector2(240, 360))
	if not near(moved, 40.0, 0.5) or p.position.x >= 240 or p.position.y >= 360:
		return "a diagonal move (up+left, 0.1 s) went %s px to %s, not 40 px up-left" % [moved, p.position]
	p.position = Vector2(470, 700)
	Input.action_press("move_right")
	Input.action_press("move_down")
	p._process(1.0)
	Input.action_release("move_right")
	Input.action_release("move_down")
	var size = get_viewport().get_visible_rect().size
	if p.position.x > size.x + 0.01 or p.position.y > size.y + 0.01:
		return "the player left the screen: %s outside %s" % [p.position, size]
	if p.position.x < size.x - 1 or p.position.y < size.y - 1:
		return "the player stopped at %s, short of the screen's corner %s" % [p.position, size]
	return ""
