class_name Player
extends CharacterBody2D
## The player: moves with the `move_*` input actions and reports enemy contact.

signal hit(damage: int)

const DEFAULT_SPEED := 200.0

@export var stats: PlayerStats


func _physics_process(_delta: float) -> void:
	var direction := Input.get_vector(&"move_left", &"move_right", &"move_up", &"move_down")
	var speed := stats.speed if stats else DEFAULT_SPEED
	velocity = direction * speed
	move_and_slide()
	for i in get_slide_collision_count():
		var collider := get_slide_collision(i).get_collider()
		if collider is Node and (collider as Node).is_in_group(&"enemies"):
			hit.emit(10)
