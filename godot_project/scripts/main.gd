extends Node2D
## Root of the 2D demo scene: keeps the HUD in sync with the score.

@onready var score_label: Label = $HUD/ScoreLabel


func _ready() -> void:
	GameState.score_changed.connect(_on_score_changed)
	_on_score_changed(GameState.score)


func _on_spawn_timer_timeout() -> void:
	GameState.add_points(1)


func _on_player_hit(damage: int) -> void:
	print("Player hit for %d" % damage)
	GameState.reset()


func _on_score_changed(new_score: int) -> void:
	score_label.text = "Score: %d" % new_score
