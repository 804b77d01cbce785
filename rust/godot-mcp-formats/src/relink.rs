//! Text edits that keep references intact when a file moves or is copied: every
//! quoted `res://` literal naming the old path becomes the new one, and a copied
//! scene or resource gets its own header uid. Each edit touches only the bytes it
//! names; every other byte of the file is kept.

/// Characters a path must not hold to be rewritten as a literal: Godot escapes
/// them inside strings, so the quoted form would not match byte for byte.
pub fn literal_safe(path: &str) -> bool {
    !path.contains(['"', '\'', '\\']) && !path.chars().any(char::is_control)
}

/// A file's text with every reference to `old` replaced by `new`, and the 1-based
/// lines changed; `None` when the text names `old` nowhere.
///
/// A reference is a whole quoted literal: `"old"` or `'old'` (an `[ext_resource]`
/// `path=`, a script's `preload`/`load`, a setting, an `.import`'s `source_file`), or
/// `"*old"` (an autoload). A longer path that merely starts with `old` is not one.
pub fn rewrite_path_literals(text: &str, old: &str, new: &str) -> Option<(String, Vec<u32>)> {
    let mut out = String::with_capacity(text.len() + new.len());
    let mut lines = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let mut current = line.to_string();
        for quote in ['"', '\''] {
            for prefix in ["", "*"] {
                let from = format!("{quote}{prefix}{old}{quote}");
                if current.contains(&from) {
                    current = current.replace(&from, &format!("{quote}{prefix}{new}{quote}"));
                }
            }
        }
        if current != line {
            lines.push(i as u32 + 1);
        }
        out.push_str(&current);
    }
    (!lines.is_empty()).then_some((out, lines))
}

/// A `.tscn`/`.tres` text with its header's `uid="…"` set to `uid` (added when the
/// header has none); `None` when the first section is not a `gd_scene` /
/// `gd_resource` header.
pub fn set_header_uid(text: &str, uid: &str) -> Option<String> {
    let start = text.len() - text.trim_start().len();
    let rest = &text[start..];
    if !(rest.starts_with("[gd_scene") || rest.starts_with("[gd_resource")) {
        return None;
    }
    let end = start + rest.find(']')?;
    let header = &text[start..end];
    let new_header = match header.find(" uid=\"") {
        Some(at) => {
            let value_start = at + " uid=\"".len();
            let value_end = value_start + header[value_start..].find('"')?;
            format!("{}{uid}{}", &header[..value_start], &header[value_end..])
        }
        None => format!("{header} uid=\"{uid}\""),
    };
    Some(format!("{}{new_header}{}", &text[..start], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_literals_are_rewritten_and_prefixes_are_not() {
        let text = "[ext_resource type=\"Script\" path=\"res://a.gd\" id=\"1_x\"]\n\
                    const B = preload('res://a.gd')\n\
                    var c = \"res://a.gd.bak\"\n\
                    Main=\"*res://a.gd\"\n";
        let (out, lines) = rewrite_path_literals(text, "res://a.gd", "res://s/b.gd").unwrap();
        assert_eq!(lines, [1, 2, 4]);
        assert_eq!(
            out,
            "[ext_resource type=\"Script\" path=\"res://s/b.gd\" id=\"1_x\"]\n\
             const B = preload('res://s/b.gd')\n\
             var c = \"res://a.gd.bak\"\n\
             Main=\"*res://s/b.gd\"\n"
        );
        assert_eq!(
            rewrite_path_literals("x = 1", "res://a.gd", "res://b.gd"),
            None
        );
    }

    #[test]
    fn header_uid_is_replaced_or_added() {
        let with = "[gd_scene load_steps=2 format=3 uid=\"uid://old\"]\n\n[node name=\"A\" type=\"Node\"]\n";
        assert_eq!(
            set_header_uid(with, "uid://new").unwrap(),
            "[gd_scene load_steps=2 format=3 uid=\"uid://new\"]\n\n[node name=\"A\" type=\"Node\"]\n"
        );
        let without = "[gd_resource type=\"Curve\" format=3]\n\n[resource]\n";
        assert_eq!(
            set_header_uid(without, "uid://n").unwrap(),
            "[gd_resource type=\"Curve\" format=3 uid=\"uid://n\"]\n\n[resource]\n"
        );
        assert_eq!(set_header_uid("extends Node\n", "uid://n"), None);
    }

    #[test]
    fn unsafe_literals_are_named() {
        assert!(literal_safe("res://a b/c.tscn"));
        assert!(!literal_safe("res://a\"b.tscn"));
        assert!(!literal_safe("res://a\\b.tscn"));
    }
}
