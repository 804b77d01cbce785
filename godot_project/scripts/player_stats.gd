class_name PlayerStats
extends Resource
## Tunable player numbers, saved as res://resources/player_stats.tres.

@export var max_health: int = 100
@export var speed: float = 200.0
@export var display_name: String = "Player"
@export var abilities: PackedStringArray = PackedStringArray()
