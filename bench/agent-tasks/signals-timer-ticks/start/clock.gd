extends Node

var ticks = 0


func _on_tick():
	ticks += 1
