//! Goose's `config.yaml`: our extension under `extensions:` merged in as text, so every
//! other byte (comments, key order, quoting) stays as it was.
//!
//! No YAML library here keeps comments on a round trip, so the edit is made on lines and
//! then **proven** by parsing both files with a YAML 1.2 parser (saphyr): every other
//! top-level key and every other extension must read the same as before, and ours must
//! read as the entry wanted. An edit that cannot be proven is refused, writing nothing,
//! with the entry to add by hand.

use godot_mcp_protocol::clients::goose_entry;
use saphyr::{LoadableYamlNode, Yaml};
use serde_json::Value;

use super::entry::{Entry, SetupError, shape};

/// The file's new text with `entry` merged in (equal to `old` when nothing changes).
pub(super) fn merge_goose(old: &str, entry: &Entry) -> Result<String, SetupError> {
    let args: Vec<&str> = entry.args.iter().map(String::as_str).collect();
    let wanted: Vec<(&str, Value)> = goose_entry(&entry.name, &entry.command, &args);
    let docs = load(old)?;
    let before = docs.first();
    let top = match before {
        None => None,
        Some(y) if y.is_null() => None,
        Some(y) => Some(
            y.as_mapping()
                .ok_or_else(|| shape("the top level is not a YAML mapping".to_owned()))?,
        ),
    };
    let name_key = yaml_key(&entry.name);
    let extensions = top.and_then(|t| t.get(&Yaml::value_from_str("extensions")));
    let new = match extensions {
        None => {
            let sep = if old.is_empty() || old.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!(
                "{old}{sep}extensions:\n  {name_key}:\n{}",
                block(&wanted, "    ")
            )
        }
        Some(ext) if ext.is_null() || ext.as_mapping().is_some_and(|m| m.is_empty()) => {
            let (start, end) = key_line(old, "", "extensions")
                .ok_or_else(|| by_hand("`extensions` is not a plain block key", entry))?;
            format!(
                "{}extensions:\n  {name_key}:\n{}{}",
                &old[..start],
                block(&wanted, "    "),
                &old[end..]
            )
        }
        Some(ext) => {
            let ext = ext
                .as_mapping()
                .ok_or_else(|| shape("`extensions` is not a YAML mapping".to_owned()))?;
            let (_, ext_end) = key_line(old, "", "extensions")
                .ok_or_else(|| by_hand("`extensions` is not a plain block key", entry))?;
            let child = child_indent(old, ext_end, 0)
                .ok_or_else(|| by_hand("`extensions` is not a block mapping", entry))?;
            match ext.get(&Yaml::value_from_str(&entry.name)) {
                None => format!(
                    "{}{child}{name_key}:\n{}{}",
                    &old[..ext_end],
                    block(&wanted, &format!("{child}{child}")),
                    &old[ext_end..]
                ),
                Some(existing) => {
                    let map = existing.as_mapping().ok_or_else(|| {
                        shape(format!("`extensions.{}` is not a YAML mapping", entry.name))
                    })?;
                    let same = wanted.iter().all(|(k, v)| {
                        map.get(&Yaml::value_from_str(k)).and_then(to_json).as_ref() == Some(v)
                    });
                    if same {
                        return Ok(old.to_owned());
                    }
                    update_entry(old, &child, entry, &wanted)?
                }
            }
        }
    };
    prove(before, &new, entry, &wanted)?;
    Ok(new)
}

fn load(text: &str) -> Result<Vec<Yaml<'_>>, SetupError> {
    Yaml::load_from_str(text).map_err(|e| shape(format!("does not parse as YAML: {e}")))
}

fn by_hand(why: &str, entry: &Entry) -> SetupError {
    let args: Vec<&str> = entry.args.iter().map(String::as_str).collect();
    shape(format!(
        "{why}; add this under `extensions:` by hand:\n  {}:\n{}",
        yaml_key(&entry.name),
        block(&goose_entry(&entry.name, &entry.command, &args), "    ")
    ))
}

/// A mapping key as YAML reads it back: plain when it is safe, else a JSON string (a YAML
/// double-quoted scalar).
fn yaml_key(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with('-');
    if plain {
        name.to_owned()
    } else {
        Value::from(name).to_string()
    }
}

/// `key: value` lines, each indented by `indent`; values are JSON, which YAML reads.
fn block(pairs: &[(&str, Value)], indent: &str) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{indent}{k}: {v}\n"))
        .collect()
}

/// The lines of `text` as (start, end after its newline, content without the newline).
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, at, l.trim_end_matches(['\n', '\r']))
    })
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches(' ').len()]
}

/// Blank or comment-only: no part of the structure.
fn is_filler(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// The span of the line `<indent><key>:` with nothing after the colon but an optional
/// comment or an empty flow mapping `{}` (a block key).
fn key_line(text: &str, indent: &str, key: &str) -> Option<(usize, usize)> {
    lines(text).find_map(|(start, end, line)| {
        let rest = line.strip_prefix(indent)?;
        if rest.starts_with(' ') {
            return None;
        }
        let after = rest
            .strip_prefix(key)
            .or_else(|| rest.strip_prefix(&Value::from(key).to_string()))?
            .strip_prefix(':')?
            .trim();
        let plain = after.is_empty() || after.starts_with('#') || after == "{}";
        plain.then_some((start, end))
    })
}

/// The indentation of the first structural line after `from`, if it is deeper than
/// `parent` spaces (the children of a block mapping).
fn child_indent(text: &str, from: usize, parent: usize) -> Option<String> {
    let (_, _, line) = lines(&text[from..]).find(|(_, _, l)| !is_filler(l))?;
    let indent = indent_of(line);
    (indent.len() > parent && !line.trim_start().starts_with('-')).then(|| indent.to_owned())
}

/// Our keys of an existing entry replaced (or added at its end); its other keys, with
/// their nested lines and comments, kept as written.
fn update_entry(
    old: &str,
    child: &str,
    entry: &Entry,
    wanted: &[(&str, Value)],
) -> Result<String, SetupError> {
    let (_, ext_end) = key_line(old, "", "extensions")
        .ok_or_else(|| by_hand("`extensions` is not a plain block key", entry))?;
    let rel = key_line(&old[ext_end..], child, &entry.name)
        .ok_or_else(|| by_hand("the existing entry is not a block mapping", entry))?;
    let name_end = ext_end + rel.1;
    let inner = child_indent(old, name_end, child.len())
        .ok_or_else(|| by_hand("the existing entry is not a block mapping", entry))?;
    // The entry's lines: up to the first structural line at `child` depth or less.
    let body_end = lines(&old[name_end..])
        .find(|(_, _, l)| !is_filler(l) && indent_of(l).len() <= child.len())
        .map_or(old.len(), |(s, _, _)| name_end + s);
    // Each key of the entry with its continuation lines.
    let mut chunks: Vec<(Option<String>, String)> = Vec::new();
    for (_, _, line) in lines(&old[name_end..body_end]) {
        let full = format!("{line}\n");
        let key = (!is_filler(line) && indent_of(line) == inner).then(|| {
            line.trim_start()
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        });
        match (key, chunks.last_mut()) {
            (Some(k), _) => chunks.push((Some(k.trim_matches('"').to_owned()), full)),
            (None, Some(last)) => last.1.push_str(&full),
            (None, None) => chunks.push((None, full)),
        }
    }
    let mut out = String::new();
    let mut done: Vec<&str> = Vec::new();
    for (key, text) in &chunks {
        match key
            .as_deref()
            .and_then(|k| wanted.iter().find(|(w, _)| *w == k))
        {
            Some((k, v)) => {
                out.push_str(&format!("{inner}{k}: {v}\n"));
                done.push(k);
            }
            None => out.push_str(text),
        }
    }
    for (k, v) in wanted {
        if !done.contains(k) {
            out.push_str(&format!("{inner}{k}: {v}\n"));
        }
    }
    Ok(format!("{}{out}{}", &old[..name_end], &old[body_end..]))
}

/// The new text reads as the old one with our entry set: refused otherwise.
fn prove(
    before: Option<&Yaml<'_>>,
    new: &str,
    entry: &Entry,
    wanted: &[(&str, Value)],
) -> Result<(), SetupError> {
    let unproven = |why: &str| {
        by_hand(
            &format!("the merged file could not be proven ({why})"),
            entry,
        )
    };
    let docs = load(new).map_err(|_| unproven("it does not parse"))?;
    let after = docs
        .first()
        .and_then(Yaml::as_mapping)
        .ok_or_else(|| unproven("no top-level mapping"))?;
    let ext_key = Yaml::value_from_str("extensions");
    let empty = saphyr::Mapping::new();
    let before = before.and_then(Yaml::as_mapping).unwrap_or(&empty);
    for (k, v) in before {
        if *k != ext_key && after.get(k) != Some(v) {
            return Err(unproven("another key changed"));
        }
    }
    if after.len() != before.len() + usize::from(!before.contains_key(&ext_key)) {
        return Err(unproven("the top-level keys differ"));
    }
    let ours = Yaml::value_from_str(&entry.name);
    let ext_after = after
        .get(&ext_key)
        .and_then(Yaml::as_mapping)
        .ok_or_else(|| unproven("no extensions mapping"))?;
    let ext_before = before.get(&ext_key).and_then(Yaml::as_mapping);
    for (k, v) in ext_before.into_iter().flatten() {
        if *k != ours && ext_after.get(k) != Some(v) {
            return Err(unproven("another extension changed"));
        }
    }
    let server = ext_after
        .get(&ours)
        .and_then(Yaml::as_mapping)
        .ok_or_else(|| unproven("the entry is missing"))?;
    for (k, v) in wanted {
        if server
            .get(&Yaml::value_from_str(k))
            .and_then(to_json)
            .as_ref()
            != Some(v)
        {
            return Err(unproven("the entry reads differently"));
        }
    }
    if let Some(old) = ext_before
        .and_then(|m| m.get(&ours))
        .and_then(Yaml::as_mapping)
    {
        for (k, v) in old {
            let ours = k
                .as_str()
                .is_some_and(|k| wanted.iter().any(|(w, _)| *w == k));
            if !ours && server.get(k) != Some(v) {
                return Err(unproven("a key of the existing entry changed"));
            }
        }
    }
    Ok(())
}

/// A YAML scalar or sequence of scalars as JSON (what the entry's values are).
fn to_json(y: &Yaml<'_>) -> Option<Value> {
    if let Some(s) = y.as_str() {
        return Some(Value::from(s));
    }
    if let Some(b) = y.as_bool() {
        return Some(Value::from(b));
    }
    if let Some(i) = y.as_integer() {
        return Some(Value::from(i));
    }
    if let Some(seq) = y.as_vec() {
        return seq
            .iter()
            .map(to_json)
            .collect::<Option<Vec<_>>>()
            .map(Value::from);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            name: "godot".into(),
            command: "/opt/my game/godot-mcp".into(),
            args: vec!["serve".into(), "--project".into(), "/games/a \"b\"".into()],
        }
    }

    /// Goose's own example configuration (its configuration guide), comments included.
    const GOOSE: &str = "\
# Model Configuration
active_provider: anthropic
providers:
  anthropic:
    enabled: true
    model: claude-sonnet-4-5-20250929
    configured: true
GOOSE_MODE: \"smart_approve\"

# Extensions Configuration
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin

  filesystem:
    type: stdio
    name: filesystem
    enabled: true
    cmd: npx
    args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]
    env_keys: []
    envs: {}
    timeout: 300
# trailing comment
";

    fn server(text: &str) -> Vec<(String, Value)> {
        let docs = Yaml::load_from_str(text).unwrap();
        let s = docs[0]["extensions"]["godot"].as_mapping().unwrap();
        s.iter()
            .map(|(k, v)| {
                (
                    k.as_str().unwrap().to_owned(),
                    to_json(v).unwrap_or(Value::Null),
                )
            })
            .collect()
    }

    #[test]
    fn an_entry_is_added_keeping_every_other_line() {
        let new = merge_goose(GOOSE, &entry()).unwrap();
        for line in GOOSE.lines() {
            assert!(new.contains(line), "{line:?} lost:\n{new}");
        }
        let s = server(&new);
        assert!(
            s.contains(&("cmd".into(), Value::from("/opt/my game/godot-mcp"))),
            "{s:?}"
        );
        assert!(s.contains(&("type".into(), Value::from("stdio"))));
        assert!(s.contains(&(
            "args".into(),
            serde_json::json!(["serve", "--project", "/games/a \"b\""])
        )));
        assert_eq!(
            merge_goose(&new, &entry()).unwrap(),
            new,
            "a second run changes nothing"
        );
    }

    #[test]
    fn an_existing_entry_keeps_its_own_keys() {
        let old = format!(
            "{GOOSE}extensions_note: 1\n"
        )
        .replace(
            "  filesystem:\n",
            "  godot:\n    cmd: /old/godot-mcp # old\n    envs:\n      A: b\n    description: mine\n  filesystem:\n",
        );
        let new = merge_goose(&old, &entry()).unwrap();
        assert!(
            new.contains("      A: b\n") && new.contains("description: mine"),
            "{new}"
        );
        assert!(!new.contains("/old/godot-mcp"), "{new}");
        let s = server(&new);
        assert!(
            s.contains(&("cmd".into(), Value::from("/opt/my game/godot-mcp"))),
            "{s:?}"
        );
    }

    #[test]
    fn empty_files_and_empty_extensions() {
        for old in [
            "",
            "\n",
            "# only a comment\n",
            "GOOSE_MODE: auto",
            "extensions:\n",
            "extensions: {}\nx: 1\n",
        ] {
            let new =
                merge_goose(old, &entry()).unwrap_or_else(|e| panic!("{old:?}: {}", e.message));
            assert_eq!(server(&new)[0].0, "name", "{new}");
        }
    }

    #[test]
    fn what_cannot_be_proven_is_refused() {
        for old in [
            "- a list\n",
            "extensions: [1]\n",
            "extensions: {a: {b: 1}}\n",
            "extensions:\n  godot: {cmd: x}\n",
            "a: [\n",
        ] {
            assert!(merge_goose(old, &entry()).is_err(), "{old:?} accepted");
        }
    }
}
