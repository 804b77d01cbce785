//! What the parser gives: a file's sections and their `key = value` properties.

use serde::Serialize;

use crate::error::Mark;
use crate::literal::Literal;

/// A whole file, split into sections.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    /// `key = value` lines before the first section (e.g. `config_version=5`).
    pub preamble: Vec<Property>,
    /// The sections in file order.
    pub sections: Vec<Section>,
}

/// One `[tag attr=value …]` header and the `key = value` lines under it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// The section kind: `node`, `ext_resource`, … or, in `project.godot`,
    /// the whole name between the brackets (`application`, `input`, …).
    pub tag: String,
    /// The header's `key=value` attributes, in order (never any in `project.godot`).
    pub attributes: Vec<Property>,
    /// The `key = value` lines under the header, in order.
    pub properties: Vec<Property>,
    /// 1-based line of the header.
    pub line: u32,
    #[serde(skip)]
    pub(crate) mark: Mark,
    /// Every `ExtResource`/`SubResource` written in this section, in order,
    /// so callers can check references against what was declared before.
    #[serde(skip)]
    pub(crate) refs: Vec<RefSite>,
}

/// One `key = value` (or header `key=value`): its name, its original text and
/// its typed value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Property {
    /// The key, e.g. `position`, `config/name`, `theme_override_colors/font_color`.
    pub name: String,
    /// The value exactly as written in the file (may span several lines).
    pub text: String,
    /// The typed view of the value.
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub value: Literal,
    /// 1-based line of the key.
    pub line: u32,
    #[serde(skip)]
    pub(crate) mark: Mark,
    #[serde(skip)]
    pub(crate) value_mark: Mark,
}

/// Where an `ExtResource("id")` / `SubResource("id")` was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefSite {
    pub external: bool,
    /// Byte range of the id between its quotes, when written without escapes
    /// (always, in files Godot writes): no allocation per reference.
    pub id_range: std::ops::Range<usize>,
    /// The decoded id, only when it was written with escapes.
    pub escaped_id: Option<String>,
    pub mark: Mark,
}

impl RefSite {
    pub(crate) fn id<'s>(&'s self, src: &'s str) -> &'s str {
        match &self.escaped_id {
            Some(id) => id,
            None => src.get(self.id_range.clone()).unwrap_or_default(),
        }
    }
}

impl Section {
    /// The attribute named `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&Property> {
        self.attributes.iter().find(|p| p.name == name)
    }

    /// The property named `name`, if present.
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }
}

/// How section headers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderMode {
    /// ConfigFile: everything between `[` and `]` is the section name.
    Simple,
    /// Resource files: `[tag key=value …]`.
    Attributes,
}
