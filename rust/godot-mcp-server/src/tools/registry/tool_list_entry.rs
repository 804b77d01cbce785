// One line of the published tool list (`src/tool_list.json`) as `(name, entry)`: the
// entry is the line less its trailing comma, the name the first field rmcp writes (a
// tool's name has no escapes). `None` for the array's brackets. Included by build.rs
// (which indexes the list) and by `tool_list.rs`, so both read a line the same way.
fn entry_of(line: &str) -> Option<(&str, &str)> {
    let entry = line.strip_suffix(',').unwrap_or(line);
    let rest = entry.strip_prefix(r#"{"name":""#)?;
    Some((&rest[..rest.find('"')?], entry))
}
