extends Area2D

@export var speed = 400 # How fast the player will move (pixels/sec).


func _process(delta):
	pass
