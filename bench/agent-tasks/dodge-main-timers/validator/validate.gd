extends Node
## Validator of the task "dodge-main-timers": judges the project in the engine and prints exactly
## one line, "PASSED: why" or "FAILED: why". Run: godot --headless --path <copy>
## res://validator/validate.tscn (after an editor load of the copy).

const PASS_WHY := "MobTimer 0.5 s, ScoreTimer 1 s, StartTimer 2 s one shot, StartPosition (240, 450)"


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
	var want = {"MobTimer": [0.5, false], "ScoreTimer": [1.0, false], "StartTimer": [2.0, true]}
	for n in want:
		var t = main.get_node_or_null(n)
		if not t is Timer:
			return "Main has no Timer child named %s" % n
		if not near(t.wait_time, want[n][0]) or t.one_shot != want[n][1]:
			return "%s waits %s s (one_shot %s), not %s s (one_shot %s)" % [n, t.wait_time, t.one_shot, want[n][0], want[n][1]]
	var start = main.get_node_or_null("StartPosition")
	if not start is Marker2D:
		return "Main has no Marker2D named StartPosition"
	if not near(start.position, Vector2(240, 450)):
		return "StartPosition is at %s, not (240, 450)" % [start.position]
	return ""
