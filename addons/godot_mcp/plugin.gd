@tool
extends EditorPlugin
## The on/off switch of the godot-mcp add-on.
##
## The Rust GDExtension (godot_mcp.gdextension) loads with the editor whatever Project
## Settings > Plugins says; this plugin is the toggle users see. Enabling it turns the
## Rust executor on, disabling it turns it off. While off, nothing executes.
##
## The Rust class is reached by name through ClassDB, so this script still parses (and says
## what is wrong) when the library is missing.

const API_CLASS := &"GodotMcp"

var _api: RefCounted = null


func _enter_tree() -> void:
	if ClassDB.class_exists(API_CLASS):
		_switch_on()
		return
	# On a project's very first open the editor may find the .gdextension only during its
	# first file-system scan; wait for the library instead of failing (the signal exists in
	# newer 4.x; checked so an engine without it gets the error below, not a script error).
	var manager: Object = GDExtensionManager
	if manager.has_signal(&"extension_loaded"):
		manager.connect(&"extension_loaded", _on_extension_loaded)
		print("godot-mcp: waiting for the add-on's library to load")
	else:
		_report_missing_library()


func _exit_tree() -> void:
	var manager: Object = GDExtensionManager
	if manager.has_signal(&"extension_loaded") and manager.is_connected(&"extension_loaded", _on_extension_loaded):
		manager.disconnect(&"extension_loaded", _on_extension_loaded)
	if _api == null:
		return
	_api.call(&"set_enabled", false)
	_api = null
	print("godot-mcp: plugin disabled; executor switch off")


func _on_extension_loaded(_extension: Object) -> void:
	if _api == null and ClassDB.class_exists(API_CLASS):
		GDExtensionManager.disconnect(&"extension_loaded", _on_extension_loaded)
		_switch_on()


func _switch_on() -> void:
	_api = ClassDB.instantiate(API_CLASS)
	if _api == null:
		_report_missing_library()
		return
	_api.call(&"set_enabled", true)
	print("godot-mcp: plugin enabled; executor switch on (add-on %s, Godot %s)" % [
		_api.call(&"version"), _api.call(&"godot_version")])


func _report_missing_library() -> void:
	push_error("godot-mcp: the add-on's library is not loaded (class GodotMcp is missing). Build and install it with scripts/install-addon.sh, then restart the editor.")
