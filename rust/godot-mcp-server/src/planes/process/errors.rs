//! Script errors parsed out of Godot's output.
//!
//! Godot 4.4 prints an error as a headline and a location line
//! (`core/io/logger.cpp`, `Logger::log_error`):
//!
//! ```text
//! SCRIPT ERROR: Invalid call. Nonexistent function 'explode' in base 'Node2D'.
//!           at: _ready (res://scripts/broken.gd:12)
//! ```
//!
//! `ERROR:` and `WARNING:` headlines use the same shape; their location is
//! usually the engine's C++ source, which is kept as it is.

use schemars::JsonSchema;
use serde::Serialize;

/// One error or warning Godot printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ScriptError {
    /// `script_error`, `error`, `warning`, `parse_error`.
    pub kind: &'static str,
    pub message: String,
    /// The file of its location (`res://…` for a script).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The function of its location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

fn headline(line: &str) -> Option<(&'static str, &str)> {
    let line = line.trim_start();
    let line = line.strip_prefix("USER ").unwrap_or(line);
    for (prefix, kind) in [
        ("SCRIPT ERROR: Parse Error: ", "parse_error"),
        ("SCRIPT ERROR: ", "script_error"),
        ("SCRIPT WARNING: ", "warning"),
        ("ERROR: ", "error"),
        ("WARNING: ", "warning"),
    ] {
        if let Some(rest) = line.strip_prefix(prefix) {
            return Some((kind, rest));
        }
    }
    None
}

/// `at: func (file:line)` → (func, file, line).
fn location(line: &str) -> Option<(String, String, u32)> {
    let rest = line.trim_start().strip_prefix("at: ")?;
    let open = rest.rfind(" (")?;
    let function = rest[..open].to_string();
    let inner = rest[open + 2..].strip_suffix(')')?;
    let colon = inner.rfind(':')?;
    let line_no = inner[colon + 1..].parse().ok()?;
    Some((function, inner[..colon].to_string(), line_no))
}

/// Every error and warning in `output`, in order.
pub(crate) fn parse(output: &str) -> Vec<ScriptError> {
    let lines: Vec<&str> = output.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some((kind, message)) = headline(lines[i]) {
            let mut e = ScriptError {
                kind,
                message: message.trim_end().to_string(),
                file: None,
                line: None,
                function: None,
            };
            if let Some((function, file, line)) = lines.get(i + 1).and_then(|l| location(l)) {
                e.function = Some(function);
                e.file = Some(file);
                e.line = Some(line);
                i += 1;
            }
            out.push(e);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn godot_44_runtime_error() {
        let text = "Godot Engine v4.4.1\nSCRIPT ERROR: Invalid call. Nonexistent function 'explode' in base 'Node2D'.\n          at: _ready (res://scripts/broken.gd:12)\nERROR: Failed to load script \"res://x.gd\".\n   at: load (modules/gdscript/gdscript.cpp:2936)\n";
        let e = parse(text);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].kind, "script_error");
        assert_eq!(e[0].file.as_deref(), Some("res://scripts/broken.gd"));
        assert_eq!(e[0].line, Some(12));
        assert_eq!(e[0].function.as_deref(), Some("_ready"));
        assert_eq!(e[1].kind, "error");
        assert_eq!(e[1].line, Some(2936));
    }

    #[test]
    fn parse_error_and_no_location() {
        let e = parse(
            "SCRIPT ERROR: Parse Error: Expected end of statement.\n   at: GDScript::reload (res://a.gd:3)\nERROR: lonely\n",
        );
        assert_eq!(e[0].kind, "parse_error");
        assert_eq!(e[0].line, Some(3));
        assert_eq!(e[1].file, None);
    }
}
