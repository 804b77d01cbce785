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
const MANIFEST := "res://addons/godot_mcp/godot_mcp.gdextension"

var _api: RefCounted = null


func _enter_tree() -> void:
	var library := _library_path()
	_make_server_executable(library)
	if ClassDB.class_exists(API_CLASS):
		_switch_on()
		return
	if not FileAccess.file_exists(MANIFEST):
		push_error("godot-mcp: %s is missing: the add-on must be in res://addons/godot_mcp/, not %s/ (a per-platform zip installed with \"Ignore asset root\" ticked lands there; use the Asset Library package)." % [
			MANIFEST, get_script().resource_path.get_base_dir()])
		return
	if library.is_empty():
		push_error("godot-mcp: %s names no library for this platform (%s %s); the add-on ships linux-x86_64, linux-arm64, windows-x86_64 and macos-universal." % [
			MANIFEST, OS.get_name(), Engine.get_architecture_name()])
		return
	if not FileAccess.file_exists(library):
		push_error("godot-mcp: the add-on's library for this platform is missing: %s (named by %s). Install the Asset Library package (godot_mcp-<version>-asset-library.zip) or this platform's release zip, then restart the editor." % [
			library, MANIFEST])
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


## The library the manifest names for this editor, picked as the engine's loader picks it
## (GDExtensionLibraryLoader::find_extension_library: the [libraries] key whose dot-separated
## tags are all features of this OS, the most tags winning); "" if none matches.
func _library_path() -> String:
	var config := ConfigFile.new()
	if config.load(MANIFEST) != OK or not config.has_section("libraries"):
		return ""
	var best := ""
	var best_tags := 0
	for key: String in config.get_section_keys("libraries"):
		var tags := key.split(".")
		if tags.size() <= best_tags:
			continue
		var met := true
		for tag in tags:
			if not OS.has_feature(tag.strip_edges()):
				met = false
				break
		if met:
			best = config.get_value("libraries", key)
			best_tags = tags.size()
	return best


## The editor's asset installer writes files without their mode bits (FileAccess), so the
## server bundled beside the library may not be executable yet; MCP clients start it.
func _make_server_executable(library: String) -> void:
	if library.is_empty() or OS.get_name() == "Windows":
		return
	var server := library.get_base_dir().path_join("godot-mcp")
	if not FileAccess.file_exists(server):
		return
	var mode := FileAccess.get_unix_permissions(server)
	var exec := FileAccess.UNIX_EXECUTE_OWNER | FileAccess.UNIX_EXECUTE_GROUP | FileAccess.UNIX_EXECUTE_OTHER
	if mode & exec != exec and FileAccess.set_unix_permissions(server, mode | exec) == OK:
		print("godot-mcp: made %s executable" % server)


func _report_missing_library() -> void:
	push_error("godot-mcp: the add-on's library is not loaded (class GodotMcp is missing). Build and install it with scripts/install-addon.sh, then restart the editor.")
