//! `ResPath`: a contained `res://` path, checked at the schema boundary.
//!
//! Every file-path parameter of every tool is a `ResPath`. Its `Deserialize` refuses,
//! before any I/O, a missing `res://` scheme, an absolute filesystem path, a `..`
//! that escapes the project, backslashes, NUL and control characters, percent-encoded
//! sequences, drive letters and over-long paths; `..` and `.` segments that stay inside
//! are normalized away. The second half of containment — symlinks that resolve outside
//! the project — needs the file system and is done by [`crate::project_root::Project::resolve`],
//! still before the target is opened.
//!
//! Node paths (`Player/Gun`) are not `ResPath`s.
//!
//! # Per OS
//!
//! The host's path rules come from `godot_mcp_os::paths` as pure logic, so each
//! OS's rules are unit-tested on any host. On Windows a `res://` segment must
//! also be a plain Windows name (no trailing dot or space, which Windows drops;
//! no device name like `con`; none of `<>"|?*`), so one `ResPath` never names
//! two files or a device. An export's absolute target is parsed by the host's
//! rules (drive letters, `\`, UNC and `\\?\` verbatim prefixes) and judged
//! inside or outside the project with the host's case folding; a folding the
//! file system may or may not apply (non-ASCII letters) is refused, not guessed.

use std::fmt;
use std::path::{Path, PathBuf};

use godot_mcp_os::paths::{self, Containment, Host, Style};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest `res://` path accepted, in bytes.
pub(crate) const MAX_RES_PATH_LEN: usize = 4096;

/// A normalized, syntactically contained `res://` path. `res://` alone is the project root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResPath {
    /// Normalized relative part, `/`-separated, no leading or trailing slash; empty for the root.
    rel: String,
    /// A file of Godot's private `.godot/` that the server writes as Godot's own scan
    /// would ([`ResPath::godot_owned`]): never set by parsing, so no argument names one.
    godot_owned: bool,
}

/// Why a path was refused. The message is shown to the agent as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRefusal(pub String);

impl fmt::Display for PathRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn refuse(msg: impl Into<String>) -> PathRefusal {
    PathRefusal(msg.into())
}

impl ResPath {
    /// The project root, `res://`.
    pub fn root() -> Self {
        Self {
            rel: String::new(),
            godot_owned: false,
        }
    }

    /// `rel`, a file of `.godot/` the server writes in Godot's place (the global class
    /// cache): the only hidden path the project plane writes besides VCS files.
    pub(crate) fn godot_owned(rel: &str) -> Self {
        Self {
            rel: rel.to_string(),
            godot_owned: true,
        }
    }

    /// Whether this is a [`ResPath::godot_owned`] path.
    pub fn is_godot_owned(&self) -> bool {
        self.godot_owned
    }

    /// Check and normalize a `res://` path, by the rules of the host this
    /// server runs on.
    pub fn parse(input: &str) -> Result<Self, PathRefusal> {
        Self::parse_for(Host::this(), input)
    }

    /// Check and normalize a `res://` path by `host`'s rules: on Windows every
    /// segment must also be a plain Windows file name.
    pub fn parse_for(host: Host, input: &str) -> Result<Self, PathRefusal> {
        if input.len() > MAX_RES_PATH_LEN {
            return Err(refuse(format!(
                "path is longer than {MAX_RES_PATH_LEN} bytes"
            )));
        }
        if input.chars().any(|c| c.is_control()) {
            return Err(refuse("path contains a NUL or control character"));
        }
        let Some(rest) = input.strip_prefix("res://") else {
            if input.starts_with('/') || looks_like_drive(input) {
                return Err(refuse(
                    "absolute filesystem paths are not accepted; use a res:// path inside the project",
                ));
            }
            return Err(refuse(
                "path must start with res:// (a path inside the Godot project)",
            ));
        };
        if rest.contains('\\') {
            return Err(refuse(
                "backslashes are not accepted in res:// paths; use '/'",
            ));
        }
        if has_percent_escape(rest) {
            return Err(refuse(
                "percent-encoded sequences are not accepted in res:// paths",
            ));
        }
        if rest.starts_with('/') {
            return Err(refuse(
                "res:// must be followed by a relative path (res:///… names the filesystem root)",
            ));
        }
        if looks_like_drive(rest) || rest.contains(':') {
            return Err(refuse("':' is not accepted in res:// paths"));
        }
        let mut parts: Vec<&str> = Vec::new();
        for seg in rest.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(refuse("path escapes the project with '..'"));
                    }
                }
                s if s.trim() != s || s.chars().all(|c| c == '.') => {
                    return Err(refuse(format!("path segment {s:?} is not accepted")));
                }
                s if host.style == Style::Windows => match paths::windows_name_problem(s) {
                    Some(why) => {
                        return Err(refuse(format!("path segment {s:?} is not accepted: {why}")));
                    }
                    None => parts.push(s),
                },
                s => parts.push(s),
            }
        }
        Ok(Self {
            rel: parts.join("/"),
            godot_owned: false,
        })
    }

    /// The relative part (`scenes/main.tscn`); empty for the root.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    pub fn is_root(&self) -> bool {
        self.rel.is_empty()
    }

    /// Lower-cased file extension, if any.
    pub fn extension(&self) -> Option<String> {
        let name = self.rel.rsplit('/').next()?;
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            return None;
        }
        Some(ext.to_ascii_lowercase())
    }

    /// Join a child name onto this path (used by listings; the name comes from the file system).
    pub fn join(&self, name: &str) -> Self {
        if self.rel.is_empty() {
            Self {
                rel: name.to_string(),
                godot_owned: false,
            }
        } else {
            Self {
                rel: format!("{}/{}", self.rel, name),
                godot_owned: false,
            }
        }
    }

    /// Whether the path lies in the project's private `.godot/` folder or is hidden.
    pub fn is_hidden(&self) -> bool {
        self.rel.split('/').any(|s| s.starts_with('.'))
    }
}

fn looks_like_drive(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

fn has_percent_escape(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

impl fmt::Display for ResPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "res://{}", self.rel)
    }
}

impl Serialize for ResPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ResPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ResPath::parse(&s).map_err(|e| refusal_error(e.to_string()))
    }
}

thread_local! {
    /// The last path refusal made while decoding on this thread: the argument decoder
    /// (`registry::args::decode_args`) clears it, deserializes, and takes it, so a
    /// refusal reaches the tool error as a value, not as a tag inside serde's text.
    static REFUSAL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A path refusal as a serde error, remembered for the argument decoder.
fn refusal_error<E: serde::de::Error>(msg: String) -> E {
    REFUSAL.with(|r| *r.borrow_mut() = Some(msg.clone()));
    E::custom(msg)
}

/// Takes (and clears) the path refusal last made on this thread.
pub(crate) fn take_refusal() -> Option<String> {
    REFUSAL.with(|r| r.borrow_mut().take())
}

impl JsonSchema for ResPath {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ResPath".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^res://",
            "maxLength": MAX_RES_PATH_LEN,
            "description": "A path inside the Godot project, starting with res://"
        })
    }
}

// ---------------------------------------------------------------------------------
// The schema-boundary walk: every res:// path anywhere in a call's arguments
// ---------------------------------------------------------------------------------

/// The `pattern` of every `ResPath` in a tool's input schema; the walk below finds
/// path parameters by it, wherever they sit (nested objects, arrays).
pub(crate) const RES_PATTERN: &str = "^res://";
/// The `pattern` of [`ExportTarget`]: a res:// path or an absolute filesystem path
/// (on Windows also a drive letter, `\\server\share` or `\\?\`).
#[cfg(not(windows))]
pub(crate) const EXPORT_TARGET_PATTERN: &str = "^(res://|/)";
/// The `pattern` of [`ExportTarget`]: a res:// path or an absolute filesystem path
/// (on Windows also a drive letter, `\\server\share` or `\\?\`).
#[cfg(windows)]
pub(crate) const EXPORT_TARGET_PATTERN: &str = r"^(res://|/|[A-Za-z]:[\\/]|\\\\)";

// ---------------------------------------------------------------------------------
// export_project's output_path
// ---------------------------------------------------------------------------------

/// Where an export goes, as the agent wrote it: a `res://` path (checked like every
/// `ResPath`) or an absolute filesystem path. Which of the two it is, and whether it
/// lands inside the project, is decided by
/// [`decide_export_target`](crate::project_root::decide_export_target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExportTarget(String);

impl ExportTarget {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for ExportTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let tag = |m: &str| refusal_error::<D::Error>(m.to_string());
        if s.starts_with("res://") {
            ResPath::parse(&s).map_err(|e| tag(&e.0))?;
        } else if !looks_absolute(&s) {
            return Err(tag(
                "output_path must be a res:// path inside the project or an absolute filesystem path",
            ));
        } else if s.len() > MAX_RES_PATH_LEN {
            return Err(tag(&format!(
                "path is longer than {MAX_RES_PATH_LEN} bytes"
            )));
        } else if s.chars().any(|c| c.is_control()) {
            return Err(tag("path contains a NUL or control character"));
        }
        Ok(Self(s))
    }
}

impl JsonSchema for ExportTarget {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ExportTarget".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": EXPORT_TARGET_PATTERN,
            "maxLength": MAX_RES_PATH_LEN,
            "description": "A res:// path inside the project, or an absolute filesystem path"
        })
    }
}

/// Whether `s` is spelt as an absolute path of this host (checked fully by
/// [`decide_export_target`]).
pub(crate) fn looks_absolute(s: &str) -> bool {
    match Host::this().style {
        Style::Posix => s.starts_with('/'),
        Style::Windows => {
            s.starts_with(['/', '\\']) || (looks_like_drive(s) && s[2..].starts_with(['/', '\\']))
        }
    }
}

/// An export target, decided: normalised, resolved (symlinks of its existing
/// ancestors followed), and placed inside or outside the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExportDest {
    /// Inside the project: the artifact goes through the write seam.
    Inside { res: ResPath, real: PathBuf },
    /// Outside the project: needs confirm=true.
    Outside { real: PathBuf },
}

/// Where a resolved path lies relative to the project, by a host's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placed {
    /// Inside: its `res://` path (spelt as the path spells it).
    Inside(ResPath),
    /// Outside the project.
    Outside,
    /// Neither can be proven, or inside but not a valid `res://` file path.
    Refused(String),
}

/// Places `real` (resolved: no `..`, symlinks followed) relative to the project
/// folder `root`, by `host`'s rules: its separators and prefixes, and its case
/// folding, so `C:\Proj\..\PROJ\x` and `\\?\c:\proj\x` are inside `C:\Proj`
/// on Windows and `/Users/u/GAME/x` is inside `/Users/u/game` on macOS.
pub(crate) fn place_in_project(host: Host, root: &Path, real: &Path) -> Placed {
    let (Some(root_s), Some(real_s)) = (root.to_str(), real.to_str()) else {
        // Not UTF-8: only a case-sensitive POSIX host can compare it, byte for byte.
        if host == Host::LINUX {
            return match real.strip_prefix(root) {
                Ok(_) => Placed::Refused("it is not a UTF-8 file path inside the project".into()),
                Err(_) => Placed::Outside,
            };
        }
        return Placed::Refused("the path is not valid Unicode".into());
    };
    let parts = match paths::contains_str(host, root_s, real_s) {
        Ok(Containment::Inside(parts)) => parts,
        Ok(Containment::Outside) => return Placed::Outside,
        Ok(Containment::Ambiguous) => {
            return Placed::Refused(
                "it differs from the project folder only by letters this file system may or may \
                 not treat as equal (case or Unicode form beyond ASCII); whether it is inside the \
                 project cannot be decided"
                    .into(),
            );
        }
        Err(e) => return Placed::Refused(e.to_string()),
    };
    match ResPath::parse_for(host, &format!("res://{}", parts.join("/"))) {
        Ok(res) if !res.is_root() => Placed::Inside(res),
        Ok(_) => Placed::Refused("it is not a file path inside the project".into()),
        Err(e) => Placed::Refused(format!("it is not a file path inside the project: {e}")),
    }
}

/// An absolute path as the kernel would resolve it for a create: every existing
/// component canonicalised (symlinks followed), `..` applied to what it resolved to,
/// a missing tail appended. `None` for a dangling symlink (a create through it would
/// land wherever it points).
pub(crate) fn resolve_absolute(p: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut cur = PathBuf::new();
    for c in p.components() {
        match c {
            // `C:` or `\\server\share` (Windows), then the root: kept as they are.
            Component::Prefix(_) | Component::RootDir => cur.push(c),
            Component::CurDir => {}
            // `cur` is already resolved, so its parent is the real parent.
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                let cand = cur.join(name);
                cur = if std::fs::symlink_metadata(&cand).is_ok() {
                    cand.canonicalize().ok()?
                } else {
                    cand
                };
            }
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::project_root::{Project, check_arg_paths, decide_export_target};

    #[test]
    fn normalizes_inside_paths() {
        assert_eq!(ResPath::parse("res://").unwrap().rel(), "");
        assert_eq!(ResPath::parse("res://a/./b//c").unwrap().rel(), "a/b/c");
        assert_eq!(ResPath::parse("res://a/../b.gd").unwrap().rel(), "b.gd");
        assert_eq!(
            ResPath::parse("res://scenes/main.tscn")
                .unwrap()
                .to_string(),
            "res://scenes/main.tscn"
        );
        assert_eq!(
            ResPath::parse("res://x/Main.TSCN")
                .unwrap()
                .extension()
                .as_deref(),
            Some("tscn")
        );
        assert_eq!(
            ResPath::parse("res://.gitignore").unwrap().extension(),
            None
        );
    }

    fn project_with_links() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("game");
        std::fs::create_dir_all(root.join(".godot")).unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
        godot_mcp_os::fs::symlink(dir.path().join("out"), root.join("out_link")).unwrap();
        godot_mcp_os::fs::symlink(root.join(".godot"), root.join("cache_link")).unwrap();
        godot_mcp_os::fs::symlink("/nonexistent/x", root.join("dangling")).unwrap();
        let p = Project::discover(Some(&root), Path::new("/")).unwrap();
        (dir, p)
    }

    #[test]
    fn export_targets_are_resolved_before_they_are_judged() {
        let (dir, p) = project_with_links();
        let root = p.root().to_path_buf();
        let decide = |raw: &str| decide_export_target(&p, "output_path", raw);
        let outside = |raw: &str| match decide(raw) {
            Ok(ExportDest::Outside { real }) => real,
            other => panic!("{raw}: {other:?}"),
        };
        let out = dir.path().canonicalize().unwrap();
        assert_eq!(
            outside(&format!("{}/../x.bin", root.display())),
            out.join("x.bin")
        );
        assert_eq!(
            outside(&format!("{}/a/../../x.bin", root.display())),
            out.join("x.bin")
        );
        assert_eq!(
            outside(&format!("{}/out_link/x.bin", root.display())),
            out.join("out/x.bin")
        );
        match decide(&format!("{}/a/../b/x.bin", root.display())) {
            Ok(ExportDest::Inside { res, .. }) => assert_eq!(res.to_string(), "res://b/x.bin"),
            other => panic!("{other:?}"),
        }
        match decide("res://a/x.bin") {
            Ok(ExportDest::Inside { res, real }) => {
                assert_eq!(res.to_string(), "res://a/x.bin");
                assert_eq!(real, root.join("a/x.bin"));
            }
            other => panic!("{other:?}"),
        }
        for refused in [
            "res://.godot/x.pck".to_string(),
            "res://cache_link/x.pck".into(),
            "res://out_link/x.bin".into(),
            "res://dangling".into(),
            "res://".into(),
            "res://a".into(),
            format!("{}/.godot/x.pck", root.display()),
            format!("{}/cache_link/x.pck", root.display()),
            format!("{}/dangling", root.display()),
            "game.bin".into(),
        ] {
            let e = decide(&refused).unwrap_err();
            assert_eq!(e.code, ErrorCode::PathRefused, "{refused}: {e:?}");
            assert_eq!(e.param.as_deref(), Some("output_path"), "{refused}");
        }
    }

    #[test]
    fn the_walk_finds_paths_wherever_they_sit() {
        let (_dir, p) = project_with_links();
        let schema = serde_json::json!({
            "properties": {
                "path": {"type": "string", "pattern": RES_PATTERN},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "file": {"type": "string", "pattern": RES_PATTERN},
                    "value": {"description": "any"}
                }}},
                "event": {"oneOf": [
                    {"properties": {"type": {"const": "key"}, "key": {"type": "string"}}},
                    {"properties": {"type": {"const": "file"}, "key": {"type": "string", "pattern": RES_PATTERN}}}
                ]},
                "text": {"type": "string"}
            }
        });
        let schema = schema.as_object().unwrap();
        let check = |args: serde_json::Value| {
            check_arg_paths(&p, schema, args.as_object().unwrap()).map_err(|e| {
                assert_eq!(e.code, ErrorCode::PathRefused);
                e.param.unwrap()
            })
        };
        assert_eq!(
            check(serde_json::json!({"path": "res://out_link/x"})),
            Err("path".into())
        );
        assert_eq!(
            check(
                serde_json::json!({"list": [{"file": "res://a/x"}, {"file": "res://out_link/x"}]})
            ),
            Err("list[1].file".into())
        );
        assert_eq!(
            check(
                serde_json::json!({"list": [{"value": {"k": [{"$type": "Resource", "path": "/etc/passwd"}]}}]})
            ),
            Err("list[0].value.k[0].path".into())
        );
        assert_eq!(
            check(serde_json::json!({"list": [{"value": {"$type": "Resource", "path": 3}}]})),
            Err("list[0].value.path".into())
        );
        // A new sub-resource's properties are values too, checked at any depth.
        assert_eq!(
            check(
                serde_json::json!({"list": [{"value": {"$type": "Resource", "class": "ShaderMaterial",
                "properties": {"shader": {"$type": "Resource", "path": "res://out_link/s.gdshader"}}}}]})
            ),
            Err("list[0].value.properties.shader.path".into())
        );
        assert_eq!(
            check(
                serde_json::json!({"list": [{"value": {"$type": "Resource", "class": "Gradient",
                "properties": {"next": {"$type": "Resource", "class": "Gradient",
                    "properties": {"list": ["res://../x"]}}}}}]})
            ),
            Err("list[0].value.properties.next.properties.list[0]".into())
        );
        assert_eq!(
            check(
                serde_json::json!({"list": [{"value": {"$type": "Resource", "class": "ShaderMaterial",
                "properties": {"shader": {"$type": "Resource", "path": "res://a/t.tres"}}}}]})
            ),
            Ok(())
        );
        // Only the variant the tag selects is a path.
        assert_eq!(
            check(serde_json::json!({"event": {"type": "key", "key": "Space"}})),
            Ok(())
        );
        assert_eq!(
            check(serde_json::json!({"event": {"type": "file", "key": "res://../x"}})),
            Err("event.key".into())
        );
        // A string where any JSON goes (a value) is a path: a bare res:// string loads
        // that resource for an Object property, and so does load("res://…").
        assert_eq!(
            check(serde_json::json!({"list": [{"value": "res://out_link/x.png"}]})),
            Err("list[0].value".into())
        );
        assert_eq!(
            check(serde_json::json!({"list": [{"value": {"k": ["load(\"res://../x\")"]}}]})),
            Err("list[0].value.k[0]".into())
        );
        assert_eq!(
            check(serde_json::json!({"list": [{"value": "res://a/t.tres"}]})),
            Ok(())
        );
        // A string that is not a path stays a string.
        assert_eq!(check(serde_json::json!({"text": "res://../x"})), Ok(()));
        assert_eq!(
            check(
                serde_json::json!({"path": "res://a/new.gd", "list": [{"value": {"$type": "Resource", "path": "res://a/t.tres"}}]})
            ),
            Ok(())
        );
    }

    #[test]
    fn windows_segments_must_be_plain_windows_names() {
        let w = Host::WINDOWS;
        for bad in [
            "res://con",
            "res://scenes/NUL.tscn",
            "res://Com1.txt",
            "res://scenes./main.tscn",
            "res://a/b.",
            "res://a<b",
            "res://a|b",
            "res://what?",
            "res://a*",
            "res://a\"b",
            "res://a\\..\\..\\x",
            "res://C:/x",
            "res://\\\\?\\C:\\x",
        ] {
            assert!(ResPath::parse_for(w, bad).is_err(), "{bad:?} was accepted");
        }
        // A name Windows reserves or rewrites is an ordinary name on Linux.
        for linux_ok in ["res://con", "res://a/b.", "res://a<b", "res://what?"] {
            assert!(
                ResPath::parse_for(Host::LINUX, linux_ok).is_ok(),
                "{linux_ok}"
            );
        }
        assert_eq!(
            ResPath::parse_for(w, "res://Scenes/../console.tscn")
                .unwrap()
                .rel(),
            "console.tscn"
        );
    }

    #[test]
    fn export_targets_are_placed_by_the_hosts_rules() {
        let place =
            |host, root: &str, real: &str| place_in_project(host, Path::new(root), Path::new(real));
        let inside = |r: &str| Placed::Inside(ResPath::parse(r).unwrap());
        // Windows: canonical roots are verbatim; a target may be spelt any way.
        let w = Host::WINDOWS;
        assert_eq!(
            place(w, r"\\?\C:\Proj", r"C:\Proj\..\PROJ\out\g.pck"),
            inside("res://out/g.pck")
        );
        assert_eq!(
            place(w, r"\\?\C:\Proj", r"c:/proj/g.pck"),
            inside("res://g.pck")
        );
        assert_eq!(
            place(w, r"C:\Proj", r"\\?\C:\PROJ\g.pck"),
            inside("res://g.pck")
        );
        assert_eq!(place(w, r"C:\Proj", r"C:\Proj\..\g.pck"), Placed::Outside);
        assert_eq!(place(w, r"C:\Proj", r"D:\Proj\g.pck"), Placed::Outside);
        assert_eq!(
            place(w, r"\\srv\share\Proj", r"\\?\UNC\SRV\share\proj\g.pck"),
            inside("res://g.pck")
        );
        for refused in [
            r"C:\Proj\g.pck.",
            r"C:\Proj\con",
            r"C:\Proj",
            r"\\.\C:\Proj\g",
        ] {
            assert!(
                matches!(place(w, r"C:\Proj", refused), Placed::Refused(_)),
                "{refused}"
            );
        }
        // macOS: ASCII case folds; beyond ASCII nothing is guessed.
        let m = Host::MACOS;
        assert_eq!(
            place(m, "/Users/u/Game", "/Users/u/GAME/g.pck"),
            inside("res://g.pck")
        );
        assert_eq!(
            place(m, "/Users/u/Game", "/Users/u/Games/g.pck"),
            Placed::Outside
        );
        assert!(matches!(
            place(m, "/Users/u/Caf\u{e9}", "/Users/u/Cafe\u{301}/g.pck"),
            Placed::Refused(_)
        ));
        // Linux: case matters, as before.
        let l = Host::LINUX;
        assert_eq!(
            place(l, "/home/u/Game", "/home/u/GAME/g.pck"),
            Placed::Outside
        );
        assert_eq!(
            place(l, "/home/u/Game", "/home/u/Game/g.pck"),
            inside("res://g.pck")
        );
    }

    #[test]
    fn refuses_escapes() {
        for bad in [
            "scenes/main.tscn",
            "/etc/passwd",
            "res://../x",
            "res://a/../../x",
            "res://a\\..\\b",
            "res://a\0b",
            "res://%2e%2e/x",
            "res:///etc/passwd",
            "C:/Windows",
            "res://C:/x",
            "user://save.dat",
            "file:///etc/passwd",
        ] {
            assert!(ResPath::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
