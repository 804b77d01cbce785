class_name Inventory
extends Resource

@export var items: Array[String] = []


func add_item(item_name: String) -> int:
	items.append(item_name)
	return items.size()
