extends Node

@export var mob_scene: PackedScene
var score = 0
