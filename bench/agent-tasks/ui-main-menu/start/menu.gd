extends Control

var started = false


func _on_play_pressed():
	started = true
