# The godot-mcp canonical-write helper: loads one text resource and saves it
# with Godot's own ResourceSaver to the path the server gave, then quits (0 on
# success). Run by the server as a supervised launch:
#   godot --headless --path P --script res://addons/godot_mcp/probe/canonical.gd -- \
#       --godot-mcp-in=res://x.tres --godot-mcp-out=/private/state/.../out.tres
extends SceneTree

func _initialize() -> void:
	var src := ""
	var dst := ""
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--godot-mcp-in="):
			src = a.substr(15)
		elif a.begins_with("--godot-mcp-out="):
			dst = a.substr(16)
	if src.is_empty() or dst.is_empty():
		printerr("godot-mcp helper: --godot-mcp-in and --godot-mcp-out are required")
		quit(2)
		return
	var res := ResourceLoader.load(src, "", ResourceLoader.CACHE_MODE_IGNORE)
	if res == null:
		printerr("godot-mcp helper: cannot load %s" % src)
		quit(1)
		return
	var err := ResourceSaver.save(res, dst)
	quit(0 if err == OK else 1)
