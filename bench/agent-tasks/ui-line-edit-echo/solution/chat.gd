extends VBoxContainer


func _ready():
	$Input.text_submitted.connect(_on_input_submitted)


func _on_input_submitted(text):
	if $Log.text == "":
		$Log.text = text
	else:
		$Log.text += "\n" + text
	$Input.clear()
