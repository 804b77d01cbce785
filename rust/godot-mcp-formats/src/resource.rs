//! `.tres` files ([`Resource`]) and what `.tscn` and `.tres` share: the file
//! header, `[ext_resource]` / `[sub_resource]` tables, and the check that
//! every `ExtResource("…")` / `SubResource("…")` names an id declared before it.

use serde::Serialize;

use crate::error::{ErrorKind, Mark, ParseError};
use crate::literal::Literal;
use crate::text::{HeaderMode, Property, RefSite, Section, parse_document};
use rustc_hash::FxHashMap as FastMap;

/// The `format=` versions this crate reads: every version Godot 4's text loader
/// reads (it refuses only a format above its own): 3 is Godot 4.0–4.2's and
/// every file without a base64 `PackedByteArray`, 4 is Godot 4.3+'s when the
/// file holds one, 1 and 2 are Godot 3's.
pub const SUPPORTED_FORMATS: &[i64] = &[1, 2, 3, 4];

/// The format Godot assumes when a header has no `format=`.
pub const DEFAULT_FORMAT: i64 = 4;

/// An `[ext_resource type=… uid=… path=… id=…]`: a file this one depends on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtResource {
    /// The id other sections use in `ExtResource("id")`, e.g. `1_m4in0`.
    pub id: String,
    /// The resource class, e.g. `Script`, `PackedScene`, `Texture2D`.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// `uid://…`, when the file records one.
    pub uid: Option<String>,
    /// `res://…` path of the dependency.
    pub path: String,
    /// 1-based line of the section.
    pub line: u32,
}

/// A `[sub_resource type=… id=…]`: a resource embedded in this file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubResource {
    /// The id other sections use in `SubResource("id")`.
    pub id: String,
    /// The resource class, e.g. `RectangleShape2D`.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// Its properties, in file order.
    pub properties: Vec<Property>,
    /// 1-based line of the section.
    pub line: u32,
}

/// An external resource as seen from where it is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtLink {
    /// The `[ext_resource]` id.
    pub id: String,
    /// Its `res://` path.
    pub path: String,
    /// Its `uid://`, if recorded.
    pub uid: Option<String>,
}

/// A resource reference resolved against the file's tables (used for scripts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResourceLink {
    /// `ExtResource("id")`: a separate file.
    External(ExtLink),
    /// `SubResource("id")`: embedded in this file (e.g. a built-in script).
    Internal {
        /// The `[sub_resource]` id.
        id: String,
    },
}

impl ResourceLink {
    /// The `res://` path of an external resource.
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::External(link) => Some(&link.path),
            Self::Internal { .. } => None,
        }
    }
}

/// A parsed `.tres` file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// `type=` of the header, e.g. `Resource`, `Theme`, `Gradient`.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// `script_class=` of the header: the `class_name` of its script, if any.
    pub script_class: Option<String>,
    /// `format=` of the header.
    pub format: i64,
    /// `uid=` of the header.
    pub uid: Option<String>,
    /// `load_steps=` of the header, if written.
    pub load_steps: Option<i64>,
    /// Dependencies, in file order.
    pub ext_resources: Vec<ExtResource>,
    /// Embedded resources, in file order.
    pub sub_resources: Vec<SubResource>,
    /// The `script` property of `[resource]`, resolved.
    pub script: Option<ResourceLink>,
    /// The `[resource]` properties, in file order.
    pub properties: Vec<Property>,
}

/// Parses a `.tres` text resource.
///
/// ```
/// let res = godot_mcp_formats::parse_resource(
///     "[gd_resource type=\"Gradient\" format=3]\n\n[resource]\noffsets = PackedFloat32Array(0, 1)\n",
/// ).unwrap();
/// assert_eq!(res.resource_type, "Gradient");
/// assert_eq!(res.properties[0].name, "offsets");
/// ```
pub fn parse_resource(src: &str) -> Result<Resource, ParseError> {
    let doc = parse_document(src, HeaderMode::Attributes)?;
    let mut sections = doc.sections.into_iter();
    let mut header = FileHeader::read(src, &doc.preamble, sections.next(), "gd_resource")?;
    let resource_type = header.required_string("type")?;
    let script_class = header.string("script_class")?;
    let mut tables = ResourceTables::default();
    let mut main: Option<Section> = None;
    for section in sections {
        if let Some(main) = &main {
            return Err(section.mark.error(
                src,
                ErrorKind::Structure,
                format!(
                    "[{}] after [resource] (line {}): [resource] must be the last section",
                    section.tag, main.line
                ),
            ));
        }
        match section.tag.as_str() {
            "ext_resource" => tables.add_ext(src, section)?,
            "sub_resource" => tables.add_sub(src, section)?,
            "resource" => {
                if !section.attributes.is_empty() {
                    return Err(section.mark.error(
                        src,
                        ErrorKind::Structure,
                        "[resource] takes no attributes",
                    ));
                }
                tables.check_refs(src, &section.refs)?;
                main = Some(section);
            }
            other => return Err(unknown_section(src, &section, other, "a .tres")),
        }
    }
    let Some(main) = main else {
        return Err(header.mark.error(
            src,
            ErrorKind::Truncated,
            "the file has no [resource] section",
        ));
    };
    let script = main.property("script").and_then(|p| tables.link(&p.value));
    Ok(Resource {
        resource_type,
        script_class,
        format: header.format,
        uid: header.uid,
        load_steps: header.load_steps,
        ext_resources: tables.ext,
        sub_resources: tables.sub,
        script,
        properties: main.properties,
    })
}

pub(crate) fn unknown_section(src: &str, section: &Section, tag: &str, file: &str) -> ParseError {
    section.mark.error(
        src,
        ErrorKind::UnknownSection,
        format!("[{tag}] is not a section of {file} file"),
    )
}

/// The `[gd_scene …]` / `[gd_resource …]` header.
pub(crate) struct FileHeader<'s> {
    src: &'s str,
    pub section: Section,
    pub mark: Mark,
    pub format: i64,
    pub uid: Option<String>,
    pub load_steps: Option<i64>,
}

impl<'s> FileHeader<'s> {
    pub(crate) fn read(
        src: &'s str,
        preamble: &[Property],
        first: Option<Section>,
        tag: &str,
    ) -> Result<Self, ParseError> {
        if let Some(p) = preamble.first() {
            return Err(p.mark.error(
                src,
                ErrorKind::Structure,
                format!("'{}' comes before the [{tag}] header", p.name),
            ));
        }
        let Some(section) = first else {
            return Err(crate::error::ParseError::new(
                ErrorKind::Truncated,
                crate::error::Position { line: 1, column: 1 },
                format!("the file is empty; expected a [{tag}] header"),
            ));
        };
        if section.tag != tag {
            return Err(section.mark.error(
                src,
                ErrorKind::UnsupportedFormat,
                format!("expected the [{tag}] header first, found [{}]", section.tag),
            ));
        }
        if let Some(p) = section.properties.first() {
            return Err(p.mark.error(
                src,
                ErrorKind::Structure,
                format!("the [{tag}] header takes no properties, found '{}'", p.name),
            ));
        }
        let mark = section.mark;
        // Godot's loader: no format= means its own version; a higher one is refused.
        let format = match section.attribute("format") {
            None => DEFAULT_FORMAT,
            Some(p) => match variant_int(&p.value) {
                Some(f) if SUPPORTED_FORMATS.contains(&f) => f,
                _ => {
                    return Err(p.value_mark.error(
                        src,
                        ErrorKind::UnsupportedFormat,
                        format!(
                            "format={} is not supported (this reader supports format=1 to 4, Godot 4.x)",
                            p.text
                        ),
                    ));
                }
            },
        };
        let mut header = Self {
            src,
            section,
            mark,
            format,
            uid: None,
            load_steps: None,
        };
        header.uid = header.string("uid")?;
        header.load_steps = int_attr(src, &header.section, "load_steps")?;
        Ok(header)
    }

    pub(crate) fn string(&mut self, name: &str) -> Result<Option<String>, ParseError> {
        string_attr(self.src, &mut self.section, name)
    }

    pub(crate) fn required_string(&mut self, name: &str) -> Result<String, ParseError> {
        required_string_attr(self.src, &mut self.section, name)
    }
}

/// A string attribute, moved out of the section (each attribute is read once).
/// As Godot's loader converts the field to a String, a number is taken as its
/// decimal text (`id=1` of format=2 files); any other type is an error.
pub(crate) fn string_attr(
    src: &str,
    section: &mut Section,
    name: &str,
) -> Result<Option<String>, ParseError> {
    match section.attributes.iter_mut().find(|p| p.name == name) {
        None => Ok(None),
        Some(p) => match &mut p.value {
            Literal::String(s) | Literal::StringName(s) => Ok(Some(std::mem::take(s))),
            Literal::Int(i) => Ok(Some(i.to_string())),
            _ => Err(p.value_mark.error(
                src,
                ErrorKind::Structure,
                format!("{name}= must be a string, found {}", p.text),
            )),
        },
    }
}

/// A Variant converted to an int the way Godot converts a header field
/// (`int index = fields["index"]`): ints as they are, floats truncated, bools
/// 0/1, strings by `String::to_int` (Godot writes `index="2"`). `None` for
/// the types Godot cannot convert.
pub fn variant_int(value: &Literal) -> Option<i64> {
    match value {
        Literal::Int(i) => Some(*i),
        #[allow(clippy::cast_possible_truncation)]
        Literal::Float(f) if f.is_finite() => Some(*f as i64),
        Literal::Bool(b) => Some(i64::from(*b)),
        Literal::String(s) | Literal::StringName(s) => Some(godot_to_int(s)),
        _ => None,
    }
}

/// Godot's `String::to_int`: the digits before the first `.`, in order, a `-`
/// while nothing but zeros was read negating it, everything else skipped;
/// saturating at 64 bits as Godot does.
fn godot_to_int(s: &str) -> i64 {
    let mut n: i64 = 0;
    let mut negative = false;
    for c in s.chars().take_while(|&c| c != '.') {
        if let Some(d) = c.to_digit(10) {
            n = n.saturating_mul(10).saturating_add(i64::from(d));
        } else if c == '-' && n == 0 {
            negative = !negative;
        }
    }
    if negative { -n } else { n }
}

pub(crate) fn required_string_attr(
    src: &str,
    section: &mut Section,
    name: &str,
) -> Result<String, ParseError> {
    string_attr(src, section, name)?.ok_or_else(|| {
        section.mark.error(
            src,
            ErrorKind::Structure,
            format!("[{}] is missing {name}=", section.tag),
        )
    })
}

pub(crate) fn int_attr(
    src: &str,
    section: &Section,
    name: &str,
) -> Result<Option<i64>, ParseError> {
    match section.attribute(name) {
        None => Ok(None),
        Some(p) => match variant_int(&p.value) {
            Some(i) => Ok(Some(i)),
            None => Err(p.value_mark.error(
                src,
                ErrorKind::Structure,
                format!("{name}= must be an integer, found {}", p.text),
            )),
        },
    }
}

/// The ext/sub resources declared so far, for lookups and reference checks.
#[derive(Default)]
pub(crate) struct ResourceTables {
    pub ext: Vec<ExtResource>,
    pub sub: Vec<SubResource>,
    ext_index: FastMap<String, usize>,
    sub_index: FastMap<String, usize>,
}

impl ResourceTables {
    pub(crate) fn add_ext(&mut self, src: &str, mut section: Section) -> Result<(), ParseError> {
        if let Some(p) = section.properties.first() {
            return Err(p.mark.error(
                src,
                ErrorKind::Structure,
                format!("[ext_resource] takes no properties, found '{}'", p.name),
            ));
        }
        let id = required_string_attr(src, &mut section, "id")?;
        let resource_type = required_string_attr(src, &mut section, "type")?;
        let path = required_string_attr(src, &mut section, "path")?;
        let uid = string_attr(src, &mut section, "uid")?;
        if let Some(&previous) = self.ext_index.get(&id) {
            let line = self.ext.get(previous).map_or(0, |e| e.line);
            return Err(section.mark.error(
                src,
                ErrorKind::DuplicateResourceId,
                format!("ext_resource id \"{id}\" is already declared on line {line}"),
            ));
        }
        self.ext_index.insert(id.clone(), self.ext.len());
        self.ext.push(ExtResource {
            id,
            resource_type,
            uid,
            path,
            line: section.line,
        });
        Ok(())
    }

    pub(crate) fn add_sub(&mut self, src: &str, mut section: Section) -> Result<(), ParseError> {
        let id = required_string_attr(src, &mut section, "id")?;
        let resource_type = required_string_attr(src, &mut section, "type")?;
        if let Some(&previous) = self.sub_index.get(&id) {
            let line = self.sub.get(previous).map_or(0, |e| e.line);
            return Err(section.mark.error(
                src,
                ErrorKind::DuplicateResourceId,
                format!("sub_resource id \"{id}\" is already declared on line {line}"),
            ));
        }
        // A sub-resource may only use resources declared before it.
        self.check_refs(src, &section.refs)?;
        self.sub_index.insert(id.clone(), self.sub.len());
        self.sub.push(SubResource {
            id,
            resource_type,
            properties: section.properties,
            line: section.line,
        });
        Ok(())
    }

    pub(crate) fn check_refs(&self, src: &str, refs: &[RefSite]) -> Result<(), ParseError> {
        for r in refs {
            let id = r.id(src);
            let (known, what) = if r.external {
                (self.ext_index.contains_key(id), "ExtResource")
            } else {
                (self.sub_index.contains_key(id), "SubResource")
            };
            if !known {
                return Err(r.mark.error(
                    src,
                    ErrorKind::UnknownResourceReference,
                    format!("{what}(\"{id}\") names no resource declared before it"),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn ext_link(&self, id: &str) -> Option<ExtLink> {
        let e = self.ext.get(*self.ext_index.get(id)?)?;
        Some(ExtLink {
            id: e.id.clone(),
            path: e.path.clone(),
            uid: e.uid.clone(),
        })
    }

    pub(crate) fn ext_type(&self, id: &str) -> Option<&str> {
        Some(&self.ext.get(*self.ext_index.get(id)?)?.resource_type)
    }

    /// Resolves `ExtResource`/`SubResource` values; anything else is `None`.
    pub(crate) fn link(&self, value: &Literal) -> Option<ResourceLink> {
        match value {
            Literal::ExtResource(id) => self.ext_link(id).map(ResourceLink::External),
            Literal::SubResource(id) => self
                .sub_index
                .contains_key(id)
                .then(|| ResourceLink::Internal { id: id.clone() }),
            _ => None,
        }
    }
}
