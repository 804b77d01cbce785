//! The Godot editor's asset installer, as a pure function: which `res://` path each entry of a
//! zip lands at. Written from the engine's source, `EditorAssetInstaller` in
//! `editor/asset_library/editor_asset_installer.cpp` (Godot 4.6; the same code is
//! `editor/editor_asset_installer.cpp` in 4.4):
//!
//! - `open_asset(path, p_autoskip_toplevel)`: walks the zip's entries in order
//!   (`unzGoToFirstFile`/`unzGoToNextFile`: central-directory order, what `unzip -Z1` lists)
//!   and inserts into `asset_files` (a `HashSet`, which iterates in insertion order) first
//!   every parent folder of the entry (`find_char('/', 1)`: a leading `/` is skipped), then the
//!   entry. `skip_toplevel = p_autoskip_toplevel`: the Asset Library's download calls
//!   `open_asset(file, true)` ("Ignore asset root" on); AssetLib > Import calls
//!   `open_asset(p_file)` (off), and the user may tick the box.
//! - `_check_has_toplevel()`: the first item of `asset_files` must be a folder (ends in `/`)
//!   and every other item must begin with it; then it is `toplevel_prefix`, else there is none.
//! - `_update_file_mappings()`: with a prefix and `skip_toplevel`, the first item is dropped
//!   and every other is mapped to itself minus the prefix (`trim_prefix`); otherwise to itself.
//! - `_install_asset()`: for each zip entry that has a mapping, the target is
//!   `target_dir_path.path_join(mapped)` with `target_dir_path = "res://"` (so the mapped path
//!   is appended as is); a folder entry is `make_dir_recursive`d, a file written with
//!   `FileAccess::open(target, WRITE)`: its bytes only, no mode bits.
//!
//! In an empty project nothing conflicts, so every item stays checked and every entry installs.
//! A `.` path segment resolves to its folder: `DirAccess::make_dir_recursive` runs
//! `simplify_path()`, and `FileAccess` hands the path to the OS.

use std::collections::HashSet;

/// `open_asset`: the ordered `asset_files` of a zip whose entries are `entries`.
pub fn asset_files(entries: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut insert = |name: String| {
        if !name.is_empty() && seen.insert(name.clone()) {
            files.push(name);
        }
    };
    for entry in entries {
        // find_char('/', 1): the first separator at index 1 or later.
        let mut from = 1;
        while let Some(at) = entry.get(from..).and_then(|rest| rest.find('/')) {
            let separator = from + at;
            insert(entry[..=separator].to_string());
            from = separator + 1;
        }
        insert(entry.clone());
    }
    files
}

/// `_check_has_toplevel`: the folder every item shares, if the first item is one.
pub fn toplevel_prefix(asset_files: &[String]) -> Option<String> {
    let first = asset_files.first()?;
    if !first.ends_with('/') {
        return None;
    }
    asset_files
        .iter()
        .all(|f| f.starts_with(first.as_str()))
        .then(|| first.clone())
}

/// The installer's result: each zip entry that installs, with its target.
#[derive(Debug)]
pub struct Install {
    /// The root folder the installer found (the "Ignore asset root" box is enabled only then).
    pub toplevel: Option<String>,
    /// (zip entry, `res://` target as `_install_asset` builds it), files only, zip order.
    pub files: Vec<(String, String)>,
    /// Folder entries' targets (`make_dir_recursive`).
    pub dirs: Vec<String>,
}

/// `_update_file_mappings` + `_install_asset` into `res://` of an empty project.
pub fn install(entries: &[String], skip_toplevel: bool) -> Install {
    let files = asset_files(entries);
    let toplevel = toplevel_prefix(&files);
    let mut mapped = std::collections::HashMap::new();
    for (i, item) in files.iter().enumerate() {
        let path = match (&toplevel, skip_toplevel) {
            (Some(_), true) if i == 0 => continue,
            (Some(prefix), true) => item.strip_prefix(prefix.as_str()).unwrap_or(item),
            _ => item.as_str(),
        };
        mapped.insert(item.clone(), path.to_string());
    }
    let mut out = Install {
        toplevel,
        files: Vec::new(),
        dirs: Vec::new(),
    };
    for entry in entries {
        let Some(path) = mapped.get(entry) else {
            continue; // "No remapped path means we don't want it; most likely the root."
        };
        // String::path_join: "res://" ends in '/', so the path is appended as is.
        let target = format!("res://{path}");
        if entry.ends_with('/') {
            out.dirs.push(target.trim_end_matches('/').to_string());
        } else {
            out.files.push((entry.clone(), target));
        }
    }
    out
}

/// The path a target resolves to on disk, as a clean `res://` path: `.` segments dropped
/// (`simplify_path`, the OS); `None` for a `..` segment, which could leave the project.
pub fn resolve(target: &str) -> Option<String> {
    let rest = target.strip_prefix("res://")?;
    let mut parts = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    Some(format!("res://{}", parts.join("/")))
}

/// Checks an install of the add-on's package: every file and folder lands in
/// `res://addons/godot_mcp/`, plugin.cfg and its script are where the editor looks for them,
/// and for every platform the package carries (`bin/<platform>/`), the library the
/// `.gdextension` names for it and the server beside it are installed. `manifest` is the
/// `.gdextension`'s text. Returns the resolved targets of the files, or what is wrong.
pub fn check(install: &Install, manifest: &str) -> Result<Vec<String>, String> {
    const ADDON: &str = "res://addons/godot_mcp/";
    let mut landed = Vec::new();
    for (entry, target) in &install.files {
        let path = resolve(target).ok_or_else(|| format!("{entry} -> {target} leaves res://"))?;
        if !path.starts_with(ADDON) {
            return Err(format!(
                "{entry} lands at {path}, outside {ADDON} (root {:?})",
                install.toplevel
            ));
        }
        landed.push(path);
    }
    for target in &install.dirs {
        let path = resolve(target).ok_or_else(|| format!("{target} leaves res://"))?;
        // The add-on's folder, one inside it, or one of its parents (res://addons).
        let dir = format!("{path}/");
        if !dir.starts_with(ADDON) && !ADDON.starts_with(&dir) {
            return Err(format!("folder {path} is outside {ADDON}"));
        }
    }
    let has = |p: &str| landed.iter().any(|l| l == p);
    // Project Settings > Plugins finds res://addons/<name>/plugin.cfg; its script= is
    // relative to the cfg's folder.
    let cfg = format!("{ADDON}plugin.cfg");
    if !has(&cfg) {
        return Err(format!("{cfg} not installed; installed: {landed:?}"));
    }
    let gdextension = format!("{ADDON}godot_mcp.gdextension");
    if !has(&gdextension) {
        return Err(format!("{gdextension} not installed"));
    }
    let mut platforms = 0;
    for line in manifest.lines() {
        let Some((_tag, value)) = line.split_once(" = \"res://addons/godot_mcp/bin/") else {
            continue;
        };
        let rel = value.trim_end_matches('"');
        let (platform, lib) = rel.split_once('/').ok_or(line)?;
        let folder = format!("{ADDON}bin/{platform}/");
        if !landed.iter().any(|l| l.starts_with(&folder)) {
            continue; // a platform this package does not carry
        }
        platforms += 1;
        let lib = format!("{folder}{lib}");
        if !has(&lib) {
            return Err(format!("{lib} (named by the .gdextension) not installed"));
        }
        let server = if platform.starts_with("windows") {
            "godot-mcp.exe"
        } else {
            "godot-mcp"
        };
        if !has(&format!("{folder}{server}")) {
            return Err(format!("no {folder}{server} beside the library"));
        }
    }
    if platforms == 0 {
        return Err(format!(
            "no library named by the .gdextension is installed: {landed:?}"
        ));
    }
    Ok(landed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_github_archive_root_is_found_and_stripped_only_when_skipping() {
        let zip = names(&["repo-abc/", "repo-abc/addons/a/plugin.cfg"]);
        let on = install(&zip, true);
        assert_eq!(on.toplevel.as_deref(), Some("repo-abc/"));
        assert_eq!(on.files[0].1, "res://addons/a/plugin.cfg");
        assert!(on.dirs.is_empty(), "the root itself is not installed");
        let off = install(&zip, false);
        assert_eq!(off.files[0].1, "res://repo-abc/addons/a/plugin.cfg");
        assert_eq!(off.dirs, ["res://repo-abc"]);
    }

    #[test]
    fn parent_folders_are_implied_and_a_top_level_file_first_means_no_root() {
        // No folder entries: open_asset inserts the parents itself.
        let zip = names(&["addons/a/x.gd", "addons/a/y.gd"]);
        assert_eq!(
            asset_files(&zip),
            ["addons/", "addons/a/", "addons/a/x.gd", "addons/a/y.gd"]
        );
        assert_eq!(install(&zip, true).files[0].1, "res://a/x.gd");
        // The first item is a file: no root, nothing stripped even with the box forced on.
        let zip = names(&["LICENSE", "addons/a/x.gd"]);
        assert_eq!(install(&zip, true).toplevel, None);
        assert_eq!(install(&zip, true).files[1].1, "res://addons/a/x.gd");
        // Two top-level folders: no root.
        let zip = names(&["a/x", "b/y"]);
        assert_eq!(install(&zip, true).toplevel, None);
    }

    #[test]
    fn a_dot_root_is_stripped_or_resolved_to_the_same_place() {
        let zip = names(&["./addons/a/x.gd"]);
        assert_eq!(asset_files(&zip)[0], "./");
        let on = install(&zip, true);
        assert_eq!(on.toplevel.as_deref(), Some("./"));
        assert_eq!(on.files[0].1, "res://addons/a/x.gd");
        let off = install(&zip, false);
        assert_eq!(off.files[0].1, "res://./addons/a/x.gd");
        assert_eq!(resolve(&off.files[0].1).unwrap(), "res://addons/a/x.gd");
        assert_eq!(resolve("res://../x"), None);
    }
}
