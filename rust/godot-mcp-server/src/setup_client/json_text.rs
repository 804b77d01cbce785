//! JSON text edited in place: the spans of an object's members in text serde_json has
//! already accepted, and new members rendered and indented like their siblings (see
//! `merge_json`: every byte outside the spans we touch stays as it was).

use serde_json::Value;

/// End (exclusive) of the string starting at `i` (a `"`), or the text's end if it never
/// closes (not yet validated text: serde_json says what is wrong with it).
pub(super) fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(b.len())
}

/// Pre-rendered JSON text, to nest rendered objects.
pub(super) struct Raw(pub(super) String);

pub(super) trait Render {
    fn render(&self) -> String;
}
impl Render for Value {
    fn render(&self) -> String {
        serde_json::to_string_pretty(self).expect("a Value always serializes")
    }
}
impl Render for Raw {
    fn render(&self) -> String {
        self.0.clone()
    }
}

/// `{ "k": v, ... }` with the keys in the given order (serde_json's map would sort them).
pub(super) fn render_object<V: Render>(pairs: &[(String, V)], step: &str) -> String {
    if pairs.is_empty() {
        return "{}".to_owned();
    }
    let members: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{step}{}: {}",
                Value::from(k.as_str()),
                reindent(&v.render(), step)
            )
        })
        .collect();
    format!("{{\n{}\n}}", members.join(",\n"))
}

/// Indent every line but the first by `indent` (the first follows a key on its line).
pub(super) fn reindent(text: &str, indent: &str) -> String {
    text.replace('\n', &format!("\n{indent}"))
}

/// The whitespace that starts the line holding byte `at`, if only whitespace precedes it.
pub(super) fn line_indent(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let lead = &text[start..at];
    if lead.chars().all(|c| c == ' ' || c == '\t') {
        lead.to_owned()
    } else {
        String::new()
    }
}

/// Add `"key": value` as the last member of `obj`, indented like its siblings.
pub(super) fn insert_member(text: &str, obj: &ObjectSpan, key: &str, value: &str) -> String {
    let key = Value::from(key).to_string();
    match obj.members.last() {
        Some(last) => {
            let first = &obj.members[0];
            let indent = line_indent(text, first.key_start);
            let sep = if indent.is_empty() && !text[obj.open..first.key_start].contains('\n') {
                " ".to_owned()
            } else {
                format!("\n{indent}")
            };
            format!(
                "{},{sep}{key}: {}{}",
                &text[..last.value_end],
                reindent(value, &indent),
                &text[last.value_end..]
            )
        }
        None => {
            let outer = line_indent(text, obj.open);
            let indent = format!("{outer}  ");
            format!(
                "{}\n{indent}{key}: {}\n{outer}{}",
                &text[..=obj.open],
                reindent(value, &indent),
                &text[obj.close..]
            )
        }
    }
}

/// Byte spans of one JSON object in text serde_json has already accepted.
pub(super) struct ObjectSpan {
    pub(super) open: usize,
    pub(super) close: usize,
    pub(super) members: Vec<MemberSpan>,
}

pub(super) struct MemberSpan {
    pub(super) key: String,
    pub(super) key_start: usize,
    pub(super) value_start: usize,
    pub(super) value_end: usize,
}

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting at `i` (a `"`).
fn scan_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

/// End (exclusive) of the value starting at `i`.
fn scan_value(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' => scan_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b[j] {
                    b'"' => {
                        j = scan_string(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// The members of the object whose `{` is at `open`. The text is valid JSON (serde_json
/// parsed it), so the scanner need not re-check the grammar.
pub(super) fn scan_object(b: &[u8], open: usize) -> ObjectSpan {
    let mut members = Vec::new();
    let mut i = skip_ws(b, open + 1);
    while b[i] != b'}' {
        let key_start = i;
        let key_end = scan_string(b, i);
        let key: String = serde_json::from_slice(&b[key_start..key_end]).expect("valid JSON key");
        i = skip_ws(b, key_end) + 1; // the ':'
        let value_start = skip_ws(b, i);
        let value_end = scan_value(b, value_start);
        members.push(MemberSpan {
            key,
            key_start,
            value_start,
            value_end,
        });
        i = skip_ws(b, value_end);
        if b[i] == b',' {
            i = skip_ws(b, i + 1);
        }
    }
    ObjectSpan {
        open,
        close: i,
        members,
    }
}
