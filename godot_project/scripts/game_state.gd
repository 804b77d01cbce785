extends Node
## Global game state, registered as the `GameState` autoload in project.godot.

signal score_changed(new_score: int)

var score: int = 0:
	set(value):
		score = value
		score_changed.emit(score)


func add_points(points: int) -> void:
	score += points


func reset() -> void:
	score = 0
