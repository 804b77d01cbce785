extends Node2D


func vanish():
	queue_free()
