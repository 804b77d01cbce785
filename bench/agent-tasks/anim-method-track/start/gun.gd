extends Node2D

var shots = 0


func fire():
	shots += 1
