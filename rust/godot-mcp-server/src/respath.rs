//! `ResPath`: a contained `res://` path, checked at the schema boundary.
//!
//! Every file-path parameter of every tool is a `ResPath`. Its `Deserialize` refuses,
//! before any I/O, a missing `res://` scheme, an absolute filesystem path, a `..`
//! that escapes the project, backslashes, NUL and control characters, percent-encoded
//! sequences, drive letters and over-long paths; `..` and `.` segments that stay inside
//! are normalized away. The second half of containment — symlinks that resolve outside
//! the project — needs the file system and is done by [`crate::project::Project::resolve`],
//! still before the target is opened.
//!
//! Node paths (`Player/Gun`) are not `ResPath`s.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest `res://` path accepted, in bytes.
pub const MAX_RES_PATH_LEN: usize = 4096;

/// A normalized, syntactically contained `res://` path. `res://` alone is the project root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResPath {
    /// Normalized relative part, `/`-separated, no leading or trailing slash; empty for the root.
    rel: String,
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
        Self { rel: String::new() }
    }

    /// Check and normalize a `res://` path.
    pub fn parse(input: &str) -> Result<Self, PathRefusal> {
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
                s => parts.push(s),
            }
        }
        Ok(Self {
            rel: parts.join("/"),
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
            }
        } else {
            Self {
                rel: format!("{}/{}", self.rel, name),
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
        ResPath::parse(&s).map_err(|e| serde::de::Error::custom(format!("{PATH_REFUSED_TAG}{e}")))
    }
}

/// Prefix that lets the argument decoder tell a path refusal from a type error.
pub(crate) const PATH_REFUSED_TAG: &str = "\u{1}path-refused:";

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

#[cfg(test)]
mod tests {
    use super::*;

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
