//! A line-level editor for `project.godot` (Godot's ConfigFile text): `[section]`
//! headers, then `key=value` lines whose Variant value may continue over several
//! lines while its brackets are open (input actions do).
//!
//! Edits replace, insert or remove exactly one entry's bytes; every other byte of
//! the file — comments, blank lines, ordering, values the server does not
//! understand — is preserved. Nothing here re-serializes the file.

use crate::variant::{Scan, scan_balanced};

/// One `key=value` entry and where it lies in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    section: String,
    key: String,
    /// Byte offset of the entry's first line.
    start: usize,
    /// Byte offset just after the entry's last line (its newline included).
    end: usize,
    /// Byte range of the value text (after `=`, without the final newline).
    value: (usize, usize),
}

/// A `[section]` header and where its body ends.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Section {
    name: String,
    /// Byte offset just after the header line.
    header_end: usize,
}

/// A parsed `project.godot`; edits return the new text and leave `self` unchanged.
#[derive(Debug, Clone)]
pub struct ConfigText {
    text: String,
    entries: Vec<Entry>,
    sections: Vec<Section>,
}

/// A setting name split the way Godot stores it: `application/config/name` lives
/// in `[application]` under the key `config/name`.
pub fn split_setting(name: &str) -> Option<(&str, &str)> {
    let (section, key) = name.split_once('/')?;
    if section.is_empty() || key.is_empty() {
        return None;
    }
    Some((section, key))
}

impl ConfigText {
    pub fn parse(text: &str) -> Self {
        let mut entries = Vec::new();
        let mut sections = Vec::new();
        let mut section = String::new();
        let mut pos = 0;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let start = pos;
            pos += line.len();
            i += 1;
            let content = line.trim_end_matches(['\n', '\r']);
            let trimmed = content.trim();
            if trimmed.is_empty() || trimmed.starts_with(';') || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.starts_with('[') && trimmed.ends_with(']') {
                section = trimmed[1..trimmed.len() - 1].to_string();
                sections.push(Section {
                    name: section.clone(),
                    header_end: pos,
                });
                continue;
            }
            let Some(eq) = content.find('=') else {
                continue;
            };
            let key = content[..eq].trim().to_string();
            let value_start = start + eq + 1;
            let mut value_text = content[eq + 1..].to_string();
            // The value continues while its brackets or strings are open.
            while scan_balanced(&value_text) == Scan::Open && i < lines.len() {
                value_text.push('\n');
                value_text.push_str(lines[i].trim_end_matches(['\n', '\r']));
                pos += lines[i].len();
                i += 1;
            }
            let last = &text[start..pos];
            let newline = if last.ends_with("\r\n") {
                2
            } else if last.ends_with('\n') {
                1
            } else {
                0
            };
            entries.push(Entry {
                section: section.clone(),
                key,
                start,
                end: pos,
                value: (value_start, pos - newline),
            });
        }
        Self {
            text: text.to_string(),
            entries,
            sections,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn find(&self, section: &str, key: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.section == section && e.key == key)
    }

    /// The raw Variant text of `section`/`key`.
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.find(section, key)
            .map(|e| &self.text[e.value.0..e.value.1])
    }

    /// Keys of a section, in file order.
    pub fn keys(&self, section: &str) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|e| e.section == section)
            .map(|e| e.key.as_str())
            .collect()
    }

    /// The text with `section`/`key` set to `value` (Variant text): replaced in
    /// place when present, else appended to its section, else in a new section at
    /// the end of the file.
    pub fn set(&self, section: &str, key: &str, value: &str) -> String {
        if let Some(e) = self.find(section, key) {
            return format!(
                "{}{}{}",
                &self.text[..e.value.0],
                value,
                &self.text[e.value.1..]
            );
        }
        let line = format!("{key}={value}\n");
        let last_in_section = self
            .entries
            .iter()
            .filter(|e| e.section == section)
            .map(|e| e.end)
            .max();
        let header = self.sections.iter().find(|s| s.name == section);
        let at = match (last_in_section, header) {
            (Some(end), _) => Some(end),
            // An empty section: after the header and the blank line Godot puts under it.
            (None, Some(h)) => {
                let rest = &self.text[h.header_end..];
                let blank = if rest.starts_with("\r\n") {
                    2
                } else if rest.starts_with('\n') {
                    1
                } else {
                    0
                };
                Some(h.header_end + blank)
            }
            (None, None) => None,
        };
        match at {
            Some(at) => {
                // An entry at the very end of a file without a final newline.
                let sep = if at > 0 && !self.text[..at].ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                format!("{}{sep}{line}{}", &self.text[..at], &self.text[at..])
            }
            None => {
                let mut out = self.text.clone();
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push('\n');
                }
                out.push_str(&format!("[{section}]\n\n{line}"));
                out
            }
        }
    }

    /// The text without `section`/`key`; `None` when it is absent.
    pub fn remove(&self, section: &str, key: &str) -> Option<String> {
        let e = self.find(section, key)?;
        Some(format!("{}{}", &self.text[..e.start], &self.text[e.end..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = "; Engine configuration file.\n; It's best edited using the editor UI and not directly,\n\nconfig_version=5\n\n[application]\n\nconfig/name=\"Demo\"\nrun/main_scene=\"res://main.tscn\"\nconfig/features=PackedStringArray(\"4.4\", \"Forward Plus\")\n\n[autoload]\n\nGame=\"*res://game.gd\"\n\n[input]\n\nmove_left={\n\"deadzone\": 0.5,\n\"events\": [Object(InputEventKey,\"resource_local_to_scene\":false,\"resource_name\":\"\",\"device\":-1,\"physical_keycode\":65,\"script\":null)\n, Object(InputEventJoypadButton,\"resource_local_to_scene\":false,\"button_index\":13,\"script\":null)\n]\n}\njump={\n\"deadzone\": 0.5,\n\"events\": []\n}\n\n[rendering]\n\nrenderer/rendering_method=\"gl_compatibility\"\n";

    #[test]
    fn parses_multiline_values_and_sections() {
        let c = ConfigText::parse(PROJECT);
        assert_eq!(c.get("", "config_version"), Some("5"));
        assert_eq!(c.get("application", "config/name"), Some("\"Demo\""));
        assert_eq!(c.keys("input"), vec!["move_left", "jump"]);
        assert!(c.get("input", "move_left").unwrap().ends_with("\n]\n}"));
        assert_eq!(
            c.get("rendering", "renderer/rendering_method"),
            Some("\"gl_compatibility\"")
        );
    }

    #[test]
    fn set_replaces_in_place_and_preserves_the_rest() {
        let c = ConfigText::parse(PROJECT);
        let out = c.set("application", "config/name", "\"New\"");
        assert_eq!(
            out,
            PROJECT.replace("config/name=\"Demo\"", "config/name=\"New\"")
        );
        // Replacing a multi-line value keeps neighbours intact.
        let out = c.set("input", "move_left", "{}");
        assert!(out.contains("\nmove_left={}\njump={\n"), "{out}");
        assert!(out.starts_with(&PROJECT[..PROJECT.find("move_left").unwrap()]));
    }

    #[test]
    fn set_appends_to_section_or_creates_it() {
        let c = ConfigText::parse(PROJECT);
        let out = c.set("autoload", "Music", "\"*res://music.gd\"");
        assert_eq!(
            out,
            PROJECT.replace(
                "Game=\"*res://game.gd\"\n",
                "Game=\"*res://game.gd\"\nMusic=\"*res://music.gd\"\n"
            )
        );
        let out = c.set("physics", "2d/default_gravity", "500.0");
        assert_eq!(
            out,
            format!("{PROJECT}\n[physics]\n\n2d/default_gravity=500.0\n")
        );
        let reparsed = ConfigText::parse(&out);
        assert_eq!(reparsed.get("physics", "2d/default_gravity"), Some("500.0"));
        let empty = ConfigText::parse("[input]\n\n[rendering]\n\nx=1\n");
        assert_eq!(
            empty.set("input", "a", "1"),
            "[input]\n\na=1\n[rendering]\n\nx=1\n"
        );
        let no_newline = ConfigText::parse("[a]\n\nx=1");
        assert_eq!(no_newline.set("a", "y", "2"), "[a]\n\nx=1\ny=2\n");
    }

    #[test]
    fn remove_takes_exactly_one_entry() {
        let c = ConfigText::parse(PROJECT);
        let out = c.remove("input", "move_left").unwrap();
        let start = PROJECT.find("move_left=").unwrap();
        let end = PROJECT.find("jump=").unwrap();
        assert_eq!(out, format!("{}{}", &PROJECT[..start], &PROJECT[end..]));
        assert_eq!(c.remove("input", "nope"), None);
        let out = c.remove("autoload", "Game").unwrap();
        assert_eq!(out, PROJECT.replace("Game=\"*res://game.gd\"\n", ""));
    }

    #[test]
    fn round_trip_without_edits_is_identity() {
        for text in [PROJECT, "", "x=1", "[a]\r\n\r\nk=\"v\"\r\n"] {
            let c = ConfigText::parse(text);
            assert_eq!(c.text(), text);
            if let Some(k) = c.keys("a").first() {
                let v = c.get("a", k).unwrap().to_string();
                assert_eq!(c.set("a", k, &v), text);
            }
        }
    }

    #[test]
    fn split_setting_needs_a_section() {
        assert_eq!(
            split_setting("application/config/name"),
            Some(("application", "config/name"))
        );
        assert_eq!(split_setting("config_version"), None);
        assert_eq!(split_setting("/x"), None);
    }
}
