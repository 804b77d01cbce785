//! MSBuild's diagnostics in their documented canonical form ("MSBuild and Visual Studio
//! format for diagnostic messages",
//! <https://learn.microsoft.com/visualstudio/msbuild/msbuild-diagnostic-format-for-tasks>):
//!
//! ```text
//! Origin : Subcategory Category Code : Text
//! Main.cs(17,20): warning CS0168: The variable 'x' is declared but never used
//! C:\dir1\strings.resx(2) : error BC30188: Declaration expected.
//! cl : Command line warning D4024 : unrecognized source file type 'file1.cs', object . . .
//! error CS0006: Metadata file 'System.dll' could not be found.
//! ```
//!
//! Origin may be blank, a tool name (`MSBUILD`, `CSC`), or a file with an optional
//! location: `(line)`, `(line-line)`, `(line,col)`, `(line,col-col)` or
//! `(line,col,endline,endcol)`. Category is `error` or `warning`, case-insensitive;
//! Code has no spaces; Subcategory is free text before the category. `dotnet build`
//! appends the project (` [/path/App.csproj]`) and may prefix a node number (`1>`).

use schemars::JsonSchema;
use serde::Serialize;

/// One diagnostic line of a build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Diagnostic {
    /// `error` or `warning`.
    pub severity: &'static str,
    /// `CS1002`, `MSB1009`, `GD0001`… (absent when the line has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// The source file, when the origin is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// A tool origin (`MSBUILD`, `CSC`) rather than a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subcategory: Option<String>,
    /// The project `dotnet build` names after the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// Every diagnostic line of `output`, each once (dotnet repeats them in its summary),
/// in first-seen order.
pub fn parse_diagnostics(output: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for line in output.lines() {
        if let Some(d) = parse_line(line)
            && !out.contains(&d)
        {
            out.push(d);
        }
    }
    out
}

/// One line in the canonical form, else `None`.
pub fn parse_line(line: &str) -> Option<Diagnostic> {
    let s = line.trim_end_matches(['\r', '\n']).trim_start();
    // A multi-processor build's node prefix: `12>`.
    let s = match s.find('>') {
        Some(i) if i > 0 && s[..i].bytes().all(|b| b.is_ascii_digit()) => &s[i + 1..],
        _ => s,
    };
    // With an origin: `origin : [subcategory] category [code] : text`. The origin ends
    // at the first colon, past a drive letter (`C:\…`).
    let skip = match s.as_bytes() {
        [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic() => 2,
        _ => 0,
    };
    if let Some(i) = s[skip..].find(':').map(|i| i + skip)
        && let Some(mut d) = after_origin(&s[i + 1..])
    {
        let origin = s[..i].trim();
        if !origin.is_empty() {
            set_origin(&mut d, origin);
            return Some(d);
        }
    }
    // Without one: `[subcategory] category [code] : text`.
    after_origin(s)
}

/// `[subcategory] category [code] : text [project]`.
fn after_origin(rest: &str) -> Option<Diagnostic> {
    let colon = rest.find(':')?;
    let (head, text) = (&rest[..colon], &rest[colon + 1..]);
    let words: Vec<&str> = head.split_whitespace().collect();
    let category = |w: &str| {
        if w.eq_ignore_ascii_case("error") {
            Some("error")
        } else if w.eq_ignore_ascii_case("warning") {
            Some("warning")
        } else {
            None
        }
    };
    let (severity, code, sub) = match words.as_slice() {
        [] => return None,
        [.., c, code] if category(c).is_some() => {
            (category(c)?, Some(*code), &words[..words.len() - 2])
        }
        [.., c] => (category(c)?, None, &words[..words.len() - 1]),
    };
    let mut message = text.trim();
    let mut project = None;
    if let Some(open) = message.rfind(" [")
        && message.ends_with(']')
    {
        let p = &message[open + 2..message.len() - 1];
        let lower = p.to_ascii_lowercase();
        if lower.ends_with("proj") || lower.ends_with(".sln") || lower.ends_with(".slnx") {
            project = Some(p.to_string());
            message = message[..open].trim_end();
        }
    }
    Some(Diagnostic {
        severity,
        code: code.map(str::to_string),
        message: message.to_string(),
        file: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        tool: None,
        subcategory: (!sub.is_empty()).then(|| sub.join(" ")),
        project,
    })
}

/// The origin: a file with its location, or a tool's name.
fn set_origin(d: &mut Diagnostic, origin: &str) {
    if let Some(open) = origin.rfind('(')
        && origin.ends_with(')')
    {
        let loc = &origin[open + 1..origin.len() - 1];
        if !loc.is_empty()
            && loc
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b',' || b == b'-')
        {
            let file = origin[..open].trim_end();
            let n: Vec<Option<u32>> = loc
                .split([',', '-'])
                .map(|x| x.trim().parse().ok())
                .collect();
            let ranged = loc.contains('-');
            match (n.as_slice(), ranged) {
                ([l], _) => d.line = *l,
                ([l, el], true) => (d.line, d.end_line) = (*l, *el),
                ([l, c], false) => (d.line, d.column) = (*l, *c),
                ([l, c, ec], true) => (d.line, d.column, d.end_column) = (*l, *c, *ec),
                ([l, c, el, ec], _) => {
                    (d.line, d.column, d.end_line, d.end_column) = (*l, *c, *el, *ec);
                }
                _ => {}
            }
            d.file = Some(file.to_string());
            return;
        }
    }
    // No location: a path (it has a separator or an extension) or a tool.
    if origin.contains(['/', '\\', '.']) {
        d.file = Some(origin.to_string());
    } else {
        d.tool = Some(origin.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(l: &str) -> Diagnostic {
        parse_line(l).unwrap_or_else(|| panic!("not a diagnostic: {l}"))
    }

    #[test]
    fn the_documented_examples() {
        let d = p("Main.cs(17,20): warning CS0168: The variable 'x' is declared but never used");
        assert_eq!(d.severity, "warning");
        assert_eq!(d.code.as_deref(), Some("CS0168"));
        assert_eq!(d.file.as_deref(), Some("Main.cs"));
        assert_eq!((d.line, d.column), (Some(17), Some(20)));
        assert_eq!(d.message, "The variable 'x' is declared but never used");
        assert_eq!(d.project, None);

        let d = p(r"C:\dir1\strings.resx(2) : error BC30188: Declaration expected.");
        assert_eq!(d.severity, "error");
        assert_eq!(d.file.as_deref(), Some(r"C:\dir1\strings.resx"));
        assert_eq!((d.line, d.column), (Some(2), None));
        assert_eq!(d.message, "Declaration expected.");

        let d = p(
            "cl : Command line warning D4024 : unrecognized source file type 'file1.cs', object . . .",
        );
        assert_eq!(d.tool.as_deref(), Some("cl"));
        assert_eq!(d.file, None);
        assert_eq!(d.subcategory.as_deref(), Some("Command line"));
        assert_eq!(d.code.as_deref(), Some("D4024"));
        assert_eq!(
            d.message,
            "unrecognized source file type 'file1.cs', object . . ."
        );

        let d = p("error CS0006: Metadata file 'System.dll' could not be found.");
        assert_eq!((d.severity, d.code.as_deref()), ("error", Some("CS0006")));
        assert_eq!(
            (d.file.as_deref(), d.tool.as_deref(), d.line),
            (None, None, None)
        );
    }

    #[test]
    fn dotnet_build_forms() {
        // The project suffix dotnet build appends.
        let d = p(
            "/home/me/My Game (copy)/Player.cs(12,5): error CS1002: ; expected [/home/me/My Game (copy)/My Game.csproj]",
        );
        assert_eq!(d.file.as_deref(), Some("/home/me/My Game (copy)/Player.cs"));
        assert_eq!((d.line, d.column), (Some(12), Some(5)));
        assert_eq!(d.code.as_deref(), Some("CS1002"));
        assert_eq!(d.message, "; expected");
        assert_eq!(
            d.project.as_deref(),
            Some("/home/me/My Game (copy)/My Game.csproj")
        );

        // A range: (line,col,endline,endcol); Windows path with spaces and parentheses.
        let d = p(
            r"  3>C:\Users\a b\Game (1)\Mob.cs(4,9,4,15): warning CS0169: The field 'Mob._x' is never used [C:\Users\a b\Game (1)\Game.csproj]",
        );
        assert_eq!(d.file.as_deref(), Some(r"C:\Users\a b\Game (1)\Mob.cs"));
        assert_eq!(
            (d.line, d.column, d.end_line, d.end_column),
            (Some(4), Some(9), Some(4), Some(15))
        );
        assert_eq!(d.severity, "warning");

        // (line-line) and (line,col-col).
        let d = p("a.cs(3-5): error X1: m");
        assert_eq!((d.line, d.end_line, d.column), (Some(3), Some(5), None));
        let d = p("a.cs(3,2-7): error X1: m");
        assert_eq!(
            (d.line, d.column, d.end_column),
            (Some(3), Some(2), Some(7))
        );

        // MSBuild's own origin, without a position, with and without a project.
        let d = p("MSBUILD : error MSB1009: Project file does not exist.");
        assert_eq!(d.tool.as_deref(), Some("MSBUILD"));
        assert_eq!(d.code.as_deref(), Some("MSB1009"));
        assert_eq!(d.message, "Project file does not exist.");
        let d = p(
            "/usr/share/dotnet/sdk/8.0.404/Microsoft.Common.CurrentVersion.targets : warning MSB3245: Could not resolve this reference. [/p/Game.csproj]",
        );
        assert_eq!(
            d.file.as_deref(),
            Some("/usr/share/dotnet/sdk/8.0.404/Microsoft.Common.CurrentVersion.targets")
        );
        assert_eq!(d.line, None);
        assert_eq!(d.project.as_deref(), Some("/p/Game.csproj"));

        // Category is case-insensitive; a bracketed message tail that is no project stays.
        let d = p("x.cs(1,1): ERROR CS0001: see [docs]");
        assert_eq!(
            (d.severity, d.message.as_str(), d.project),
            ("error", "see [docs]", None)
        );

        // A Godot source generator's diagnostic goes through the compiler the same way.
        let d = p(
            "/p/Player.cs(6,22): error GD0001: Missing partial modifier on declaration of type 'Player' that derives from 'GodotObject' [/p/Game.csproj]",
        );
        assert_eq!(d.code.as_deref(), Some("GD0001"));
    }

    #[test]
    fn not_diagnostics() {
        for l in [
            "",
            "Build succeeded.",
            "    0 Warning(s)",
            "  Determining projects to restore...",
            "Time Elapsed 00:00:01.23",
            "  Game -> /p/.godot/mono/temp/bin/Debug/Game.dll",
            "Build FAILED.",
        ] {
            assert_eq!(parse_line(l), None, "{l}");
        }
        // The summary repeats each diagnostic: counted once.
        let out = "a.cs(1,1): error CS1: x [/p/G.csproj]\n\nBuild FAILED.\n\na.cs(1,1): error CS1: x [/p/G.csproj]\n    0 Warning(s)\n    1 Error(s)\n";
        assert_eq!(parse_diagnostics(out).len(), 1);
    }
}
