//! Godot's class reference XML, as `godot --doctool <dir>` writes it
//! (`doc/classes/*.xml`, `modules/*/doc_classes/*.xml`): one `<class>` per file
//! with its methods, members, signals, constants, constructors, operators and
//! theme items.
//!
//! Only what an agent needs to call an API is kept (names, types, defaults,
//! qualifiers, enums, descriptions); setters, getters and the XML layout are
//! not. Empty descriptions (a bare `--doctool` writes them empty) are dropped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Every class of one engine version: the reference the server caches as JSON.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClassDb {
    format: u32,
    /// `godot --version`, e.g. `4.4.1.stable.official.49a5bc7b6`.
    pub version: String,
    pub classes: BTreeMap<String, ClassDoc>,
    /// Why descriptions are absent, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptions_note: Option<String>,
}

impl ClassDb {
    /// Bumped when the cache's shape changes, so an old cache is rebuilt, not misread.
    pub const FORMAT: u32 = 2;

    /// The reference of engine `version`, in the current cache format.
    pub fn new(version: String, classes: BTreeMap<String, ClassDoc>) -> Self {
        Self {
            format: Self::FORMAT,
            version,
            classes,
            descriptions_note: None,
        }
    }

    /// Whether a cache read back is of this format and of engine `version`.
    pub fn is_current(&self, version: &str) -> bool {
        self.format == Self::FORMAT && self.version == version
    }

    /// `class` and its bases, nearest first.
    pub fn chain(&self, class: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = self.classes.get(class).and_then(|c| c.inherits.clone());
        while let Some(name) = next {
            if out.contains(&name) || out.len() > 64 {
                break; // a cycle would be a broken cache; never loop on it
            }
            next = self.classes.get(&name).and_then(|c| c.inherits.clone());
            out.push(name);
        }
        out
    }

    /// The type `class` (or the nearest base that declares it) gives its property `name`.
    pub fn member_type(&self, class: &str, name: &str) -> Option<&str> {
        std::iter::once(class.to_string())
            .chain(self.chain(class))
            .find_map(|c| {
                let m = self
                    .classes
                    .get(&c)?
                    .members
                    .iter()
                    .find(|m| m.name == name)?;
                Some(m.ty.name.as_str())
            })
    }
}

/// One class (or built-in type) of the reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClassDoc {
    pub name: String,
    /// The direct base class; `None` for Object and the built-in types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherits: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub brief: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constructors: Vec<MethodDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub methods: Vec<MethodDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<MethodDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<MethodDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constants: Vec<ConstantDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub theme_items: Vec<ThemeItemDoc>,
}

/// A method, constructor, operator or signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MethodDoc {
    pub name: String,
    /// Return type (`void` when it returns nothing; absent for signals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<TypeRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamDoc>,
    /// `const`, `virtual`, `vararg`, `static`, … as Godot writes them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub qualifiers: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A type as the reference names it, with its enum when the int is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TypeRef {
    #[serde(rename = "type")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "enum")]
    pub enum_name: Option<String>,
}

impl TypeRef {
    /// The enum name when there is one (`Node.ProcessMode`), else the type.
    pub fn display(&self) -> &str {
        self.enum_name.as_deref().unwrap_or(&self.name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ParamDoc {
    pub name: String,
    #[serde(flatten)]
    pub ty: TypeRef,
    /// The default value in GDScript syntax, when the parameter is optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// A property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MemberDoc {
    pub name: String,
    #[serde(flatten)]
    pub ty: TypeRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Set on a member a subclass re-declares with another default (`overrides="Node"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A constant or enum value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ConstantDoc {
    pub name: String,
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "enum")]
    pub enum_name: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bitfield: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A Control theme item (colour, constant, font, icon, style box).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ThemeItemDoc {
    pub name: String,
    pub data_type: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// Why a file is not a class reference page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClassDocError {
    #[error("not well-formed XML: {0}")]
    Xml(String),
    #[error("the root element is <{0}>, not <class>")]
    NotAClass(String),
    #[error("<class> has no name")]
    NoName,
}

/// Parse one class XML file.
pub fn parse_class_xml(text: &str) -> Result<ClassDoc, ClassDocError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| ClassDocError::Xml(e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "class" {
        return Err(ClassDocError::NotAClass(root.tag_name().name().into()));
    }
    let name = root.attribute("name").ok_or(ClassDocError::NoName)?;
    let mut class = ClassDoc {
        name: name.into(),
        inherits: root.attribute("inherits").map(Into::into),
        ..ClassDoc::default()
    };
    for section in root.children().filter(roxmltree::Node::is_element) {
        let items = || section.children().filter(roxmltree::Node::is_element);
        match section.tag_name().name() {
            "brief_description" => class.brief = text_of(section),
            "description" => class.description = text_of(section),
            "constructors" => class.constructors = items().map(method).collect(),
            "methods" => class.methods = items().map(method).collect(),
            "operators" => class.operators = items().map(method).collect(),
            "signals" => class.signals = items().map(method).collect(),
            "members" => class.members = items().map(member).collect(),
            "constants" => class.constants = items().map(constant).collect(),
            "theme_items" => class.theme_items = items().map(theme_item).collect(),
            _ => {}
        }
    }
    Ok(class)
}

/// An element's text, trimmed (the XML indents it with tabs).
fn text_of(node: roxmltree::Node<'_, '_>) -> String {
    let mut s = String::new();
    for d in node.descendants().filter(roxmltree::Node::is_text) {
        s.push_str(d.text().unwrap_or(""));
    }
    clean_text(&s)
}

/// A description as the reference indents it (tabs, leading and trailing newlines),
/// without the indentation: each line trimmed, the whole trimmed.
pub fn clean_text(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).collect();
    lines.join("\n").trim().to_string()
}

fn type_ref(node: roxmltree::Node<'_, '_>) -> TypeRef {
    TypeRef {
        name: node.attribute("type").unwrap_or("Variant").into(),
        enum_name: node.attribute("enum").map(Into::into),
    }
}

fn attr(node: roxmltree::Node<'_, '_>, name: &str) -> String {
    node.attribute(name).unwrap_or("").into()
}

fn method(node: roxmltree::Node<'_, '_>) -> MethodDoc {
    let mut m = MethodDoc {
        name: attr(node, "name"),
        qualifiers: attr(node, "qualifiers"),
        ..MethodDoc::default()
    };
    let mut params: Vec<(usize, ParamDoc)> = Vec::new();
    for child in node.children().filter(roxmltree::Node::is_element) {
        match child.tag_name().name() {
            "return" => m.returns = Some(type_ref(child)),
            "param" => {
                let index = child
                    .attribute("index")
                    .and_then(|i| i.parse().ok())
                    .unwrap_or(params.len());
                params.push((
                    index,
                    ParamDoc {
                        name: attr(child, "name"),
                        ty: type_ref(child),
                        default: child.attribute("default").map(Into::into),
                    },
                ));
            }
            "description" => m.description = text_of(child),
            _ => {}
        }
    }
    params.sort_by_key(|(i, _)| *i);
    m.params = params.into_iter().map(|(_, p)| p).collect();
    m
}

fn member(node: roxmltree::Node<'_, '_>) -> MemberDoc {
    MemberDoc {
        name: attr(node, "name"),
        ty: type_ref(node),
        default: node.attribute("default").map(Into::into),
        overrides: node.attribute("overrides").map(Into::into),
        description: text_of(node),
    }
}

fn constant(node: roxmltree::Node<'_, '_>) -> ConstantDoc {
    ConstantDoc {
        name: attr(node, "name"),
        value: attr(node, "value"),
        enum_name: node.attribute("enum").map(Into::into),
        bitfield: node.attribute("is_bitfield") == Some("true"),
        description: text_of(node),
    }
}

fn theme_item(node: roxmltree::Node<'_, '_>) -> ThemeItemDoc {
    ThemeItemDoc {
        name: attr(node, "name"),
        data_type: attr(node, "data_type"),
        ty: attr(node, "type"),
        default: node.attribute("default").map(Into::into),
        description: text_of(node),
    }
}

impl MethodDoc {
    /// GDScript-like signature: `move_local_x(delta: float, scaled: bool = false) -> void`,
    /// with the qualifiers after it (`const`, `vararg`, …).
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| match &p.default {
                Some(d) => format!("{}: {} = {d}", p.name, p.ty.display()),
                None => format!("{}: {}", p.name, p.ty.display()),
            })
            .collect();
        let mut s = format!("{}({})", self.name, params.join(", "));
        if let Some(r) = &self.returns {
            s.push_str(" -> ");
            s.push_str(r.display());
        }
        if !self.qualifiers.is_empty() {
            s.push(' ');
            s.push_str(&self.qualifiers);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `godot --headless --doctool` (tests/fixtures/godot-4.4.1/README.md).
    const NODE2D: &str = include_str!("../../../tests/fixtures/godot-4.4.1/doctool/Node2D.xml");

    #[test]
    fn captured_node2d() {
        let c = parse_class_xml(NODE2D).unwrap();
        assert_eq!(c.name, "Node2D");
        assert_eq!(c.inherits.as_deref(), Some("CanvasItem"));
        let m = c.methods.iter().find(|m| m.name == "move_local_x").unwrap();
        assert_eq!(
            m.signature(),
            "move_local_x(delta: float, scaled: bool = false) -> void"
        );
        let to_global = c.methods.iter().find(|m| m.name == "to_global").unwrap();
        assert_eq!(
            to_global.signature(),
            "to_global(local_point: Vector2) -> Vector2 const"
        );
        let pos = c.members.iter().find(|m| m.name == "position").unwrap();
        assert_eq!(pos.ty.name, "Vector2");
        assert_eq!(pos.default.as_deref(), Some("Vector2(0, 0)"));
        // A bare --doctool writes empty descriptions; they are dropped, not kept as "".
        assert!(c.description.is_empty() && m.description.is_empty());
    }

    /// A member's type comes from the class or the nearest base that declares it.
    #[test]
    fn a_members_type_is_found_up_the_chain() {
        let node2d = parse_class_xml(NODE2D).unwrap();
        let canvas = ClassDoc {
            name: "CanvasItem".into(),
            inherits: Some("Node".into()),
            members: vec![MemberDoc {
                name: "modulate".into(),
                ty: TypeRef {
                    name: "Color".into(),
                    enum_name: None,
                },
                ..MemberDoc::default()
            }],
            ..ClassDoc::default()
        };
        let db = ClassDb::new(
            "4.4".into(),
            [("Node2D".into(), node2d), ("CanvasItem".into(), canvas)].into(),
        );
        assert_eq!(db.member_type("Node2D", "position"), Some("Vector2"));
        assert_eq!(db.member_type("Node2D", "modulate"), Some("Color"));
        assert_eq!(db.member_type("Node2D", "nothing"), None);
        assert_eq!(db.member_type("Nowhere", "position"), None);
    }

    #[test]
    fn refuses_what_is_not_a_class() {
        assert!(matches!(
            parse_class_xml("<doc/>"),
            Err(ClassDocError::NotAClass(_))
        ));
        assert!(matches!(
            parse_class_xml("<class"),
            Err(ClassDocError::Xml(_))
        ));
        assert_eq!(parse_class_xml("<class/>"), Err(ClassDocError::NoName));
    }
}
