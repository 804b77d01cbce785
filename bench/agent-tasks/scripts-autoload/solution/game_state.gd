extends Node

var score = 0


func add_points(points):
	score += points
