extends CharacterBody2D
## A simple enemy that walks back and forth between walls.

@export var speed: float = 100.0

var _direction := -1.0


func _physics_process(_delta: float) -> void:
	velocity = Vector2(_direction * speed, 0.0)
	move_and_slide()
	if is_on_wall():
		_direction = -_direction
