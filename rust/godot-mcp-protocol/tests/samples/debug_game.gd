extends Node

var counter := 0
var label := "dbg"


func _process(_delta: float) -> void:
	counter += 1
	var pos := Vector2(1.5, -2.0)
	var tags := PackedStringArray(["a", "bc"])
	var info := {"name": label, "n": counter}
	var color := Color(0.5, 0.25, 1.0)
	var path := NodePath("/root/Main:position")
	tick(pos)
	if counter % 30 == 0:
		print("tick ", counter, " ", tags, info, color, path)


func tick(p: Vector2) -> void:
	var doubled := p * 2.0
	counter += int(doubled.x) - 3
