//! A C# file read as Godot's source generators read it, from the syntax tree of
//! tree-sitter's C# grammar (no regular expressions, no compilation).
//!
//! The rules, from Godot's generators (godotengine/godot,
//! `modules/mono/editor/Godot.NET.Sdk/Godot.SourceGenerators/`):
//!
//! - `ScriptPathAttributeGenerator.cs`: a script is a top-level (not nested) class that
//!   derives from `GodotObject`, whose name is the file's name without `.cs`
//!   (`Path.GetFileNameWithoutExtension(FilePath) == symbol.Name`; a generic class's
//!   name is without its type parameters); a Godot class that is not `partial` is
//!   reported (GD0001) and gets no script path.
//! - `ScriptPropertiesGenerator.cs` / `ScriptPropertyDefValGenerator.cs`: exported
//!   members are the non-static fields and properties with `[Export]`; a static one is
//!   GD0101, a read-only field or property (`readonly`, no `set`, `init`) GD0103, a
//!   write-only property GD0104, an indexer GD0105. `[Export(PropertyHint.X, "…")]`
//!   gives the hint and its string; an enum member gets `Enum` (`Flags` with
//!   `[System.Flags]`); `[ExportGroup]`, `[ExportSubgroup]` and `[ExportCategory]` open a
//!   group that holds the members after it.
//! - `ScriptSignalsGenerator.cs`: a signal is a delegate nested in the class with
//!   `[Signal]`; its name is the delegate's minus the suffix `EventHandler`
//!   (`SignalDelegateSuffix`); a delegate without the suffix is GD0201 and no signal.
//! - `[Tool]` (`ToolAttribute`) and `[GlobalClass]` (`GlobalClassAttribute`; GD0402: not
//!   on a generic class) are class attributes; attribute names may be written with or
//!   without `Attribute` and qualified (`Godot.Export`).
//!
//! Whether a base is a Godot class (the engine's, or a project class that derives
//! from one) is not in one file: [`CsFile`] keeps the base as written, and the caller
//! resolves it (the server: its project index and the engine's ClassDB).

use schemars::JsonSchema;
use serde::Serialize;
use tree_sitter::{Node, Parser};

use crate::types::{VariantType, simple_name, variant_of};

/// What one `.cs` file declares.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct CsFile {
    /// Every class, nested ones too, in source order.
    pub classes: Vec<CsClass>,
    /// Lines (1-based) where the C# grammar found a syntax error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syntax_error_lines: Vec<u32>,
}

/// One class declaration.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct CsClass {
    pub name: String,
    /// The namespace (file-scoped or block; nested blocks joined with `.`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The types this one is nested in, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outer: Vec<String>,
    /// The type parameters of a generic class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_parameters: Vec<String>,
    /// The first type of the base list as written, without `global::` and `Godot.`
    /// (C# puts the base class first; an interface there means no base class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub partial: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_class: bool,
    pub exports: Vec<CsExport>,
    pub signals: Vec<CsSignal>,
    /// What Godot's generators would report about this class's members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<GeneratorDiagnostic>,
    /// 1-based line of the declaration.
    pub line: u32,
}

impl CsClass {
    /// Whether this is a top-level class (the only kind that can be a script).
    pub fn top_level(&self) -> bool {
        self.outer.is_empty()
    }
}

/// One exported field or property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CsExport {
    pub name: String,
    /// The C# type as written.
    pub cs_type: String,
    #[serde(flatten)]
    pub godot: VariantType,
    /// `PropertyHint`'s member name (`Range`, `Enum`, `File`…), when one is given or
    /// implied (an enum's `Enum`/`Flags`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint_string: Option<String>,
    /// The `[ExportGroup]` (then `/` and the `[ExportSubgroup]`) this member is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `field` or `property`.
    pub member: &'static str,
    pub line: u32,
}

/// One `[Signal]` delegate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CsSignal {
    /// The signal's name: the delegate's minus `EventHandler`.
    pub name: String,
    pub delegate: String,
    pub parameters: Vec<CsParameter>,
    pub line: u32,
}

/// A signal parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CsParameter {
    pub name: String,
    pub cs_type: String,
    #[serde(flatten)]
    pub godot: VariantType,
}

/// A diagnostic Godot's source generators report, with its rule id (GD0001…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GeneratorDiagnostic {
    pub code: &'static str,
    pub message: String,
    pub line: u32,
}

/// Read a C# file. The grammar recovers from syntax errors; their lines are reported
/// and what parsed is kept.
pub fn read_cs(text: &str) -> CsFile {
    let mut parser = Parser::new();
    let mut out = CsFile::default();
    if parser
        .set_language(&tree_sitter_c_sharp::LANGUAGE.into())
        .is_err()
    {
        return out; // the grammar and the runtime disagree on ABI: a build error, not input
    }
    let Some(tree) = parser.parse(text, None) else {
        return out;
    };
    let src = text.as_bytes();
    let root = tree.root_node();
    if root.has_error() {
        collect_errors(root, &mut out.syntax_error_lines);
    }
    let mut r = Reader {
        src,
        enums: Vec::new(),
        flags: Vec::new(),
    };
    r.collect_enums(root);
    r.unit(root, &mut out.classes);
    out
}

fn collect_errors(n: Node, lines: &mut Vec<u32>) {
    if n.is_error() || n.is_missing() {
        let l = n.start_position().row as u32 + 1;
        if !lines.contains(&l) {
            lines.push(l);
        }
        return;
    }
    if !n.has_error() {
        return;
    }
    let mut c = n.walk();
    for child in n.children(&mut c) {
        collect_errors(child, lines);
    }
}

struct Reader<'a> {
    src: &'a [u8],
    /// Every enum declared in the file (simple names), and those with `[Flags]`.
    enums: Vec<String>,
    flags: Vec<String>,
}

fn children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

/// An attribute's name without qualification or the `Attribute` suffix.
fn attr_name(full: &str) -> &str {
    let s = simple_name(full);
    s.strip_suffix("Attribute").unwrap_or(s)
}

/// One attribute: its name and its arguments' source text.
struct Attr<'t> {
    name: String,
    args: Vec<Node<'t>>,
}

impl<'a> Reader<'a> {
    fn text(&self, n: Node) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn collect_enums(&mut self, n: Node) {
        if n.kind() == "enum_declaration"
            && let Some(name) = n.child_by_field_name("name")
        {
            let name = self.text(name).to_string();
            if self.attrs(n).iter().any(|a| a.name == "Flags") {
                self.flags.push(name.clone());
            }
            self.enums.push(name);
        }
        for c in children(n) {
            self.collect_enums(c);
        }
    }

    fn attrs<'t>(&self, n: Node<'t>) -> Vec<Attr<'t>> {
        let mut out = Vec::new();
        for list in children(n)
            .into_iter()
            .filter(|c| c.kind() == "attribute_list")
        {
            for a in children(list)
                .into_iter()
                .filter(|c| c.kind() == "attribute")
            {
                let name = a
                    .child_by_field_name("name")
                    .map(|x| attr_name(self.text(x)).to_string())
                    .unwrap_or_default();
                let args = children(a)
                    .into_iter()
                    .filter(|c| c.kind() == "attribute_argument_list")
                    .flat_map(children)
                    .filter(|c| c.kind() == "attribute_argument")
                    .collect();
                out.push(Attr { name, args });
            }
        }
        out
    }

    fn modifiers(&self, n: Node) -> Vec<&'a str> {
        children(n)
            .into_iter()
            .filter(|c| c.kind() == "modifier")
            .map(|c| self.text(c))
            .collect()
    }

    /// The compilation unit: namespaces (a file-scoped one covers what follows it) and
    /// top-level types.
    fn unit(&mut self, root: Node, out: &mut Vec<CsClass>) {
        let mut ns: Option<String> = None;
        for c in children(root) {
            match c.kind() {
                "file_scoped_namespace_declaration" => {
                    ns = c
                        .child_by_field_name("name")
                        .map(|x| self.text(x).to_string());
                    // Some grammar versions nest the following declarations in it.
                    self.declarations(c, ns.as_deref(), &[], out);
                }
                _ => self.declaration(c, ns.as_deref(), &[], out),
            }
        }
    }

    fn declarations(
        &mut self,
        n: Node,
        ns: Option<&str>,
        outer: &[String],
        out: &mut Vec<CsClass>,
    ) {
        for c in children(n) {
            self.declaration(c, ns, outer, out);
        }
    }

    fn declaration(&mut self, c: Node, ns: Option<&str>, outer: &[String], out: &mut Vec<CsClass>) {
        match c.kind() {
            "namespace_declaration" => {
                let name = c
                    .child_by_field_name("name")
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default();
                let inner = match ns {
                    Some(p) => format!("{p}.{name}"),
                    None => name,
                };
                if let Some(body) = c.child_by_field_name("body") {
                    self.declarations(body, Some(&inner), outer, out);
                }
            }
            "class_declaration" => self.class(c, ns, outer, out),
            "struct_declaration" | "record_declaration" | "interface_declaration" => {
                // Not scripts, but classes nested in them are classes.
                if let (Some(name), Some(body)) =
                    (c.child_by_field_name("name"), c.child_by_field_name("body"))
                {
                    let mut o = outer.to_vec();
                    o.push(self.text(name).to_string());
                    self.declarations(body, ns, &o, out);
                }
            }
            // Declarations inside `#if` blocks.
            "preproc_if" | "preproc_elif" | "preproc_else" => {
                self.declarations(c, ns, outer, out);
            }
            _ => {}
        }
    }

    fn class(&mut self, c: Node, ns: Option<&str>, outer: &[String], out: &mut Vec<CsClass>) {
        let name = c
            .child_by_field_name("name")
            .map(|x| self.text(x).to_string())
            .unwrap_or_default();
        let mods = self.modifiers(c);
        let attrs = self.attrs(c);
        let type_parameters = children(c)
            .into_iter()
            .filter(|x| x.kind() == "type_parameter_list")
            .flat_map(children)
            .filter(|x| x.kind() == "type_parameter")
            .map(|x| {
                x.child_by_field_name("name")
                    .map_or_else(|| self.text(x), |n| self.text(n))
                    .to_string()
            })
            .collect::<Vec<_>>();
        let base = children(c)
            .into_iter()
            .find(|x| x.kind() == "base_list")
            .and_then(|b| children(b).into_iter().find(|x| x.is_named()))
            .map(|b| {
                // `Base(args)` of a primary constructor: the type alone.
                let t = b.child_by_field_name("type").unwrap_or(b);
                let t = self.text(t);
                let t = t.strip_prefix("global::").unwrap_or(t);
                t.strip_prefix("Godot.").unwrap_or(t).to_string()
            });
        let mut class = CsClass {
            name: name.clone(),
            namespace: ns.map(str::to_string),
            outer: outer.to_vec(),
            type_parameters,
            base,
            partial: mods.contains(&"partial"),
            tool: attrs.iter().any(|a| a.name == "Tool"),
            global_class: attrs.iter().any(|a| a.name == "GlobalClass"),
            line: line(c),
            ..CsClass::default()
        };
        if class.global_class && !class.type_parameters.is_empty() {
            class.diagnostics.push(GeneratorDiagnostic {
                code: "GD0402",
                message: format!("the class '{name}' must not be generic to be a [GlobalClass]"),
                line: class.line,
            });
        }
        let index = out.len();
        out.push(class);
        let mut nested = Vec::new();
        if let Some(body) = c.child_by_field_name("body") {
            let mut inner = outer.to_vec();
            inner.push(name);
            let mut group = Group::default();
            let mut class = std::mem::take(&mut out[index]);
            for m in children(body) {
                self.member(m, &mut class, &mut group);
                self.declaration(m, ns, &inner, &mut nested);
            }
            out[index] = class;
        }
        out.extend(nested);
    }

    fn member(&self, m: Node, class: &mut CsClass, group: &mut Group) {
        match m.kind() {
            "field_declaration" | "property_declaration" => {}
            "delegate_declaration" => return self.delegate(m, class),
            _ => return,
        }
        let attrs = self.attrs(m);
        for a in &attrs {
            let first = a.args.first().and_then(|x| self.string_arg(*x));
            match a.name.as_str() {
                "ExportCategory" => *group = Group::default(),
                "ExportGroup" => {
                    group.group = first.filter(|s| !s.is_empty());
                    group.subgroup = None;
                }
                "ExportSubgroup" => group.subgroup = first.filter(|s| !s.is_empty()),
                _ => {}
            }
        }
        let Some(export) = attrs.iter().find(|a| a.name == "Export") else {
            return;
        };
        let mods = self.modifiers(m);
        let l = line(m);
        let (member, ty, names) = if m.kind() == "field_declaration" {
            let Some(decl) = children(m)
                .into_iter()
                .find(|x| x.kind() == "variable_declaration")
            else {
                return;
            };
            let ty = decl
                .child_by_field_name("type")
                .map(|t| self.text(t))
                .unwrap_or("");
            let names: Vec<String> = children(decl)
                .into_iter()
                .filter(|x| x.kind() == "variable_declarator")
                .filter_map(|x| {
                    x.child_by_field_name("name")
                        .map(|n| self.text(n).to_string())
                })
                .collect();
            ("field", ty, names)
        } else {
            let ty = m
                .child_by_field_name("type")
                .map(|t| self.text(t))
                .unwrap_or("");
            let name = m
                .child_by_field_name("name")
                .map(|n| self.text(n).to_string())
                .unwrap_or_default();
            ("property", ty, vec![name])
        };
        let who = names.join(", ");
        if mods.contains(&"static") {
            class.diagnostics.push(GeneratorDiagnostic {
                code: "GD0101",
                message: format!("the exported member '{who}' is static"),
                line: l,
            });
            return;
        }
        if member == "field" && (mods.contains(&"readonly") || mods.contains(&"const")) {
            class.diagnostics.push(GeneratorDiagnostic {
                code: "GD0103",
                message: format!("the exported member '{who}' is read-only"),
                line: l,
            });
            return;
        }
        if member == "property" {
            let accessors: Vec<&str> = m
                .child_by_field_name("accessors")
                .map(|a| {
                    children(a)
                        .into_iter()
                        .filter(|x| x.kind() == "accessor_declaration")
                        .filter_map(|x| x.child_by_field_name("name").map(|n| self.text(n)))
                        .collect()
                })
                .unwrap_or_default();
            if !accessors.contains(&"get") && accessors.contains(&"set") {
                class.diagnostics.push(GeneratorDiagnostic {
                    code: "GD0104",
                    message: format!("the exported property '{who}' is write-only"),
                    line: l,
                });
                return;
            }
            if !accessors.contains(&"set") {
                class.diagnostics.push(GeneratorDiagnostic {
                    code: "GD0103",
                    message: format!("the exported property '{who}' is read-only"),
                    line: l,
                });
                return;
            }
        }
        let is_enum = |n: &str| self.enums.iter().any(|e| e == n);
        let godot = variant_of(ty, &is_enum);
        let (mut hint, mut hint_string) = (None, None);
        if let Some(h) = export.args.first() {
            // PropertyHint.Range → Range
            hint = Some(simple_name(self.text(*h)).to_string());
            hint_string = export.args.get(1).and_then(|x| self.string_arg(*x));
        } else if godot.variant == "int"
            && let Some(e) = godot.class_name.as_deref()
        {
            let flags = self.flags.iter().any(|f| f == e);
            hint = Some(if flags { "Flags" } else { "Enum" }.to_string());
        }
        let group_name = match (&group.group, &group.subgroup) {
            (Some(g), Some(s)) => Some(format!("{g}/{s}")),
            (Some(g), None) => Some(g.clone()),
            (None, Some(s)) => Some(s.clone()),
            (None, None) => None,
        };
        for name in names {
            class.exports.push(CsExport {
                name,
                cs_type: ty.to_string(),
                godot: godot.clone(),
                hint: hint.clone(),
                hint_string: hint_string.clone(),
                group: group_name.clone(),
                member,
                line: l,
            });
        }
    }

    fn delegate(&self, d: Node, class: &mut CsClass) {
        if !self.attrs(d).iter().any(|a| a.name == "Signal") {
            return;
        }
        let delegate = d
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let Some(name) = delegate.strip_suffix("EventHandler") else {
            class.diagnostics.push(GeneratorDiagnostic {
                code: "GD0201",
                message: format!(
                    "the name of the signal delegate '{delegate}' must end with 'EventHandler'"
                ),
                line: line(d),
            });
            return;
        };
        let is_enum = |n: &str| self.enums.iter().any(|e| e == n);
        let parameters = d
            .child_by_field_name("parameters")
            .map(|p| {
                children(p)
                    .into_iter()
                    .filter(|x| x.kind() == "parameter")
                    .map(|x| {
                        let cs_type = x
                            .child_by_field_name("type")
                            .map(|t| self.text(t).to_string())
                            .unwrap_or_default();
                        CsParameter {
                            name: x
                                .child_by_field_name("name")
                                .map(|n| self.text(n).to_string())
                                .unwrap_or_default(),
                            godot: variant_of(&cs_type, &is_enum),
                            cs_type,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        class.signals.push(CsSignal {
            name: name.to_string(),
            delegate: delegate.clone(),
            parameters,
            line: line(d),
        });
    }

    /// A string literal argument's value (regular or verbatim), else `None`.
    fn string_arg(&self, arg: Node) -> Option<String> {
        let expr = children(arg).into_iter().rfind(|x| x.is_named())?;
        match expr.kind() {
            "string_literal" => {
                let mut s = String::new();
                for part in children(expr) {
                    match part.kind() {
                        "string_literal_content" => s.push_str(self.text(part)),
                        "escape_sequence" => s.push_str(&unescape(self.text(part))),
                        _ => {}
                    }
                }
                Some(s)
            }
            "verbatim_string_literal" => {
                let t = self.text(expr);
                let inner = t.strip_prefix("@\"")?.strip_suffix('"')?;
                Some(inner.replace("\"\"", "\""))
            }
            "raw_string_literal" => {
                let t = self.text(expr).trim_matches('"');
                Some(t.to_string())
            }
            _ => None,
        }
    }
}

fn unescape(e: &str) -> String {
    match e {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\r" => "\r".into(),
        "\\0" => "\0".into(),
        "\\\\" => "\\".into(),
        "\\\"" => "\"".into(),
        "\\'" => "'".into(),
        _ => e
            .strip_prefix("\\u")
            .or_else(|| e.strip_prefix("\\x"))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32)
            .map_or_else(|| e.to_string(), String::from),
    }
}

#[derive(Default)]
struct Group {
    group: Option<String>,
    subgroup: Option<String>,
}

/// The class of `file` (its name without `.cs`) among `file`'s classes: the top-level
/// class of that name, as ScriptPathAttributeGenerator matches them.
pub fn script_class<'f>(file: &'f CsFile, stem: &str) -> Option<&'f CsClass> {
    file.classes
        .iter()
        .find(|c| c.top_level() && c.name == stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
using Godot;
using System;

namespace Game.Actors;

[Tool, GlobalClass]
public partial class Player : Godot.CharacterBody2D, IDisposable
{
    [Signal]
    public delegate void HitEventHandler();

    [Signal]
    public delegate void ScoredEventHandler(int points, Node2D by);

    [Signal]
    public delegate void Broken(int x);

    public enum Mode { Walk, Run }

    [System.Flags]
    public enum Layers { A = 1, B = 2 }

    [Export]
    public int Speed { get; set; } = 400;

    [Export(PropertyHint.Range, "0,100,1")]
    public float Health = 100f;

    [ExportGroup("Look")]
    [Export] public Color Tint, Shade;
    [ExportSubgroup("Deep")]
    [Export] public PackedScene MobScene { get; set; }
    [Export] public Mode Current;
    [ExportCategory("Other")]
    [Export] private Layers _layers;
    [Export] public Godot.Collections.Array<Node> Targets = new();
    [Export(PropertyHint.File, @"*.tscn")] public string Path;

    [Export] public static int Bad;
    [Export] public readonly int AlsoBad;
    [Export] public int NoSet => 3;
    public int NotExported;

    public partial class Inner : Node { [Export] public int X; }
}

public class Helper<T> : Resource where T : Node {}
"#;

    #[test]
    fn reads_a_godot_class() {
        let f = read_cs(SAMPLE);
        assert!(
            f.syntax_error_lines.is_empty(),
            "{:?}",
            f.syntax_error_lines
        );
        let names: Vec<_> = f.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Player", "Inner", "Helper"]);
        let p = &f.classes[0];
        assert_eq!(p.namespace.as_deref(), Some("Game.Actors"));
        assert_eq!(p.base.as_deref(), Some("CharacterBody2D"));
        assert!(p.partial && p.tool && p.global_class);
        let sig: Vec<_> = p.signals.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(sig, ["Hit", "Scored"]);
        assert_eq!(
            p.signals[1].parameters[1].godot.class_name.as_deref(),
            Some("Node2D")
        );
        let ex: Vec<_> = p
            .exports
            .iter()
            .map(|e| (e.name.as_str(), e.godot.variant.as_str()))
            .collect();
        assert_eq!(
            ex,
            [
                ("Speed", "int"),
                ("Health", "float"),
                ("Tint", "Color"),
                ("Shade", "Color"),
                ("MobScene", "Object"),
                ("Current", "int"),
                ("_layers", "int"),
                ("Targets", "Array"),
                ("Path", "String"),
            ]
        );
        let health = &p.exports[1];
        assert_eq!(health.hint.as_deref(), Some("Range"));
        assert_eq!(health.hint_string.as_deref(), Some("0,100,1"));
        assert_eq!(p.exports[2].group.as_deref(), Some("Look"));
        assert_eq!(p.exports[4].group.as_deref(), Some("Look/Deep"));
        assert_eq!(p.exports[5].hint.as_deref(), Some("Enum"));
        assert_eq!(p.exports[6].hint.as_deref(), Some("Flags"));
        assert_eq!(p.exports[6].group, None, "a category closes the group");
        assert_eq!(p.exports[8].hint_string.as_deref(), Some("*.tscn"));
        let codes: Vec<_> = p.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["GD0201", "GD0101", "GD0103", "GD0103"]);
        let inner = &f.classes[1];
        assert_eq!(inner.outer, ["Player"]);
        assert_eq!(inner.exports.len(), 1);
        let h = &f.classes[2];
        assert_eq!(h.type_parameters, ["T"]);
        assert!(!h.partial);
        assert_eq!(h.namespace.as_deref(), Some("Game.Actors"));
        assert_eq!(script_class(&f, "Player").map(|c| c.line), Some(7));
        assert!(
            script_class(&f, "Inner").is_none(),
            "nested classes are no scripts"
        );
    }

    #[test]
    fn block_namespaces_nest() {
        let f = read_cs("namespace A { namespace B.C { partial class X : Node {} } }");
        assert_eq!(f.classes[0].namespace.as_deref(), Some("A.B.C"));
        let f = read_cs("partial class X : Node { void f( }");
        assert!(!f.syntax_error_lines.is_empty());
        assert_eq!(f.classes[0].name, "X");
    }
}
