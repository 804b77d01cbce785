//! GDScript's node shorthand in a Godot Expression. An agent writes `$Music.playing` or
//! `%Score.text` as it would in a script; Godot's `Expression` has no `$` or `%` syntax
//! ("Expected number after '$'"). Outside string literals, `$Name/Sub`, `$"a path"` and
//! `%Unique` become `get_node("Name/Sub")`, `get_node("a path")` and
//! `get_node("%Unique")`, which the Expression calls on its base (the current scene).

use std::borrow::Cow;

/// `expression` with the node shorthand spelled as `get_node` calls; unchanged (borrowed)
/// when it has none.
pub fn node_shorthand(expression: &str) -> Cow<'_, str> {
    if !expression.contains(['$', '%']) {
        return Cow::Borrowed(expression);
    }
    let chars: Vec<char> = expression.chars().collect();
    let mut out = String::with_capacity(expression.len() + 16);
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        // A string literal is copied as it is (escapes included).
        if c == '"' || c == '\'' {
            let q = c;
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == q {
                    break;
                }
            }
            continue;
        }
        // `%` after an operand is the modulo operator; `$`/`%` start a node only where
        // an operand may begin.
        let before = out.trim_end();
        let word_start = before
            .char_indices()
            .rev()
            .take_while(|(_, p)| ident(*p))
            .last()
            .map_or(before.len(), |(k, _)| k);
        let operand_start = matches!(&before[word_start..], "and" | "or" | "not" | "in")
            || before
                .chars()
                .last()
                .is_none_or(|p| !(ident(p) || p == ')' || p == ']' || p == '"' || p == '\''));
        // `$` is no operator in an Expression: it always starts a node.
        if c == '$' || (c == '%' && operand_start) {
            let prefix = if c == '%' { "%" } else { "" };
            if c == '$'
                && chars.get(i + 1) == Some(&'"')
                && let Some(end) = chars[i + 2..].iter().position(|&x| x == '"')
            {
                let path: String = chars[i + 2..i + 2 + end].iter().collect();
                out.push_str(&format!("get_node({path:?})"));
                i += end + 3;
                continue;
            }
            let start = i + 1;
            let mut j = start;
            while j < chars.len() && (ident(chars[j]) || (chars[j] == '/' && c == '$')) {
                j += 1;
            }
            if j > start && !chars[start].is_ascii_digit() {
                let path: String = chars[start..j].iter().collect();
                out.push_str(&format!("get_node(\"{prefix}{path}\")"));
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::node_shorthand;

    /// The shorthand an agent writes becomes get_node; strings, modulo and plain
    /// expressions are left alone.
    #[test]
    fn node_shorthand_becomes_get_node() {
        let n = |e: &str| node_shorthand(e).into_owned();
        assert_eq!(n("$Music.playing"), "get_node(\"Music\").playing");
        assert_eq!(n("$HUD/Score.text"), "get_node(\"HUD/Score\").text");
        assert_eq!(n("$\"My Node\".visible"), "get_node(\"My Node\").visible");
        assert_eq!(n("%Score.text"), "get_node(\"%Score\").text");
        assert_eq!(
            n("$Player.position.x > 10 and $Enemy == null"),
            "get_node(\"Player\").position.x > 10 and get_node(\"Enemy\") == null"
        );
        assert_eq!(n("10 % 3"), "10 % 3");
        assert_eq!(n("not %Menu.visible"), "not get_node(\"%Menu\").visible");
        assert_eq!(n("score % 2 == 0"), "score % 2 == 0");
        assert_eq!(n("\"$5 %d\" % 3"), "\"$5 %d\" % 3");
        assert_eq!(n("Time.get_ticks_msec()"), "Time.get_ticks_msec()");
        assert!(matches!(
            node_shorthand("1 + 2"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
