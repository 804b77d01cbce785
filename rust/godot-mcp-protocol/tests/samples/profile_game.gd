extends Node

var total := 0.0


func _process(_delta: float) -> void:
	for i in 20:
		total += crunch(i)


func crunch(n: int) -> float:
	var acc := 0.0
	for k in 50:
		acc += sqrt(float(n * k + 1))
	return acc
