extends Control


func set_health(value):
	$HealthBar.value = value
