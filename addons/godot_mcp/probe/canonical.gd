# The godot-mcp canonical-write helper: loads one text resource and saves it
# with Godot's own ResourceSaver to the path the server gave, then quits (0 on
# success). Run by the server as a supervised launch:
#   godot --headless --path P --script res://addons/godot_mcp/probe/canonical.gd -- \
#       --godot-mcp-in=res://x.tres --godot-mcp-out=/private/state/.../out.tres
#
# The output must be what the editor writes when it saves res://x.tres in place.
# Two things of Godot 4.4's text saver (ResourceFormatSaverText) differ outside the
# editor and for a save path other than the file's own, and both are put back here:
# - uids: the saver asks ResourceSaver::get_resource_id_for_path, a hook only the
#   editor's EditorFileSystem installs; under --script it answers "no uid", so the
#   header uid and every ext_resource uid would be dropped, and files that refer to
#   this one by uid would lose it. They are written where the saver writes them,
#   with the values the editor would use (the file's own uid, else a new one as the
#   editor creates on save; each dependency's uid from ResourceLoader).
# - ext_resource ids: the loader remembers each id under the path it loaded from
#   (Resource.set_id_for_path), the saver looks them up under the path it saves to;
#   the ids are re-keyed to the output path so they are kept, not regenerated.
# The server writes the result through its journal; Godot never writes the target.
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
	_keep_ext_ids(src, ProjectSettings.localize_path(dst))
	var err := ResourceSaver.save(res, dst)
	if err != OK:
		printerr("godot-mcp helper: saving failed: %s" % error_string(err))
		quit(1)
		return
	err = _put_back_uids(src, dst)
	if err != OK:
		printerr("godot-mcp helper: cannot rewrite %s: %s" % [dst, error_string(err)])
		quit(1)
		return
	quit(0)


# The external resources `src` loaded are in the resource cache (the main resource
# was loaded with CACHE_MODE_IGNORE, its dependencies with CACHE_MODE_REUSE): give
# each the id it has in `src` under the output path too.
func _keep_ext_ids(src: String, out_path: String) -> void:
	for dep in ResourceLoader.get_dependencies(src):
		var path := _dependency_path(dep)
		if path.is_empty() or not ResourceLoader.has_cached(path):
			continue
		var ext := ResourceLoader.load(path)
		if ext == null:
			continue
		var id := ext.get_id_for_path(src)
		if not id.is_empty():
			ext.set_id_for_path(out_path, id)


# A get_dependencies() entry is "uid::type::path" (or a bare path); the loader
# resolves a known uid before the text path, and so does this.
func _dependency_path(dep: String) -> String:
	if not dep.contains("::"):
		return dep
	var uid_text := dep.get_slice("::", 0)
	if uid_text.begins_with("uid://"):
		var uid := ResourceUID.text_to_id(uid_text)
		if uid != ResourceUID.INVALID_ID and ResourceUID.has_id(uid):
			return ResourceUID.get_id_path(uid)
	return dep.get_slice("::", 2)


func _uid_attr(uid: int) -> String:
	return ' uid="%s"' % ResourceUID.id_to_text(uid)


# Adds the uids the editor's save writes: ` uid="…"` at the end of the header tag,
# and after the type of each ext_resource tag (the block right after the header).
func _put_back_uids(src: String, dst: String) -> Error:
	var text := FileAccess.get_file_as_string(dst)
	if text.is_empty():
		return FileAccess.get_open_error()
	var lines := text.split("\n")
	if not lines[0].ends_with("]"):
		return ERR_PARSE_ERROR
	if not lines[0].contains(' uid="'):
		var uid := ResourceLoader.get_resource_uid(src)
		if uid == ResourceUID.INVALID_ID:
			uid = ResourceUID.create_id()
		lines[0] = lines[0].left(-1) + _uid_attr(uid) + "]"
	var i := 2
	while i < lines.size() and lines[i].begins_with("[ext_resource "):
		var line: String = lines[i]
		var at := line.find(' path="')
		var end := line.rfind('" id="')
		if at != -1 and end > at and not line.contains(' uid="'):
			var uid := ResourceLoader.get_resource_uid(line.substr(at + 7, end - at - 7))
			if uid != ResourceUID.INVALID_ID:
				lines[i] = line.left(at) + _uid_attr(uid) + line.substr(at)
		i += 1
	var f := FileAccess.open(dst, FileAccess.WRITE)
	if f == null:
		return FileAccess.get_open_error()
	f.store_string("\n".join(lines))
	var written := f.get_error()
	f.close()
	return written
