//! The tokenizer and parser for Godot's shared text format: the grammar under
//! `project.godot` (ConfigFile), `.tscn` and `.tres`.
//!
//! It owns the syntax only: `[section key=value …]` headers, `key = value`
//! lines, `;` comments and Variant values. What the sections *mean* belongs to
//! [`crate::project`], [`crate::scene`] and [`crate::resource`].
//!
//! The parser works on bytes, borrows from the input while scanning, tracks
//! the line number as it goes and computes columns only when an error needs one.

mod document;
mod parser;
#[cfg(test)]
mod tests;
mod values;

use crate::error::{ErrorKind, ParseError};
use crate::literal::Literal;

pub use document::{Document, Property, Section};
pub(crate) use document::{HeaderMode, RefSite};
use parser::Parser;

/// Parses a whole file into sections. Syntax only; no semantic checks.
pub(crate) fn parse_document(src: &str, mode: HeaderMode) -> Result<Document, ParseError> {
    let mut p = Parser::new(src);
    // A UTF-8 byte order mark is tolerated, as Godot does.
    if src.as_bytes().starts_with(&[0xEF, 0xBB, 0xBF]) {
        p.pos = 3;
        p.line_start = 3;
    }
    let mut preamble = Vec::new();
    // Sized up front: growing a vector of thousands of sections reallocates
    // large blocks, which made the allocator consolidate (30% of parse time).
    let mut sections: Vec<Section> = Vec::with_capacity(src.matches("\n[").count() + 1);
    loop {
        p.skip_ws_and_comments();
        match p.peek() {
            None => break,
            Some(b'[') => {
                let section = p.parse_header(mode)?;
                sections.push(section);
            }
            Some(_) => {
                let prop = p.parse_property_line()?;
                match sections.last_mut() {
                    Some(s) => {
                        s.properties.push(prop);
                        s.refs.append(&mut p.refs);
                    }
                    None => {
                        p.refs.clear();
                        preamble.push(prop);
                    }
                }
            }
        }
    }
    Ok(Document { preamble, sections })
}

/// Parses a single value written in Godot's Variant text syntax
/// (e.g. `Vector2(1, 2)`), which must be the whole input apart from
/// surrounding whitespace.
pub fn parse_value(src: &str) -> Result<Literal, ParseError> {
    let mut p = Parser::new(src);
    let v = p.value()?;
    p.skip_value_ws();
    if p.peek().is_some() {
        return Err(p.err(ErrorKind::Syntax, "unexpected text after the value"));
    }
    Ok(v)
}
