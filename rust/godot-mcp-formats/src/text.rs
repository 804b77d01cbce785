//! The tokenizer and parser for Godot's shared text format: the grammar under
//! `project.godot` (ConfigFile), `.tscn` and `.tres`.
//!
//! It owns the syntax only: `[section key=value …]` headers, `key = value`
//! lines, `;` comments and Variant values. What the sections *mean* belongs to
//! [`crate::project`], [`crate::scene`] and [`crate::resource`].
//!
//! The parser works on bytes, borrows from the input while scanning, tracks
//! the line number as it goes and computes columns only when an error needs one.

use std::borrow::Cow;

use serde::Serialize;

use crate::error::{ErrorKind, Mark, ParseError};
use crate::literal::{DictEntry, Literal, ObjectProperty};
use crate::type_names::TYPE_NAMES;

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 128;

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

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    depth: u32,
    refs: Vec<RefSite>,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn describe(c: Option<u8>) -> String {
    match c {
        None => "end of input".to_owned(),
        Some(b'\n') => "end of line".to_owned(),
        Some(c) if c.is_ascii_graphic() || c == b' ' => format!("'{}'", c as char),
        Some(c) => format!("byte 0x{c:02x}"),
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            b: src.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
            depth: 0,
            refs: Vec::new(),
        }
    }

    fn mark(&self) -> Mark {
        Mark {
            offset: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    fn err(&self, kind: ErrorKind, message: impl Into<String>) -> ParseError {
        self.mark().error(self.src, kind, message)
    }

    fn err_at(&self, mark: Mark, kind: ErrorKind, message: impl Into<String>) -> ParseError {
        mark.error(self.src, kind, message)
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if let Some(&c) = self.b.get(self.pos) {
            self.pos += 1;
            if c == b'\n' {
                self.line = self.line.saturating_add(1);
                self.line_start = self.pos;
            }
        }
    }

    /// Spaces, tabs and carriage returns: what may sit inside a line.
    fn skip_inline_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' || c > b' ' {
                break;
            }
            self.pos += 1;
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// Any whitespace (like Godot, every byte <= 32), newlines and `;` comments.
    fn skip_ws_and_comments(&mut self) {
        while let Some(c) = self.peek() {
            if c == b';' {
                self.skip_comment();
            } else if c <= b' ' && c != 0 {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn skip_value_ws(&mut self) {
        self.skip_ws_and_comments();
    }

    /// After a header or a value: only blanks and a comment until the newline.
    fn expect_line_end(&mut self, what: &str) -> Result<(), ParseError> {
        self.skip_inline_ws();
        match self.peek() {
            None | Some(b'\n') => Ok(()),
            Some(b';') => {
                self.skip_comment();
                Ok(())
            }
            c => Err(self.err(
                ErrorKind::Syntax,
                format!(
                    "unexpected {} after {what}; expected end of line",
                    describe(c)
                ),
            )),
        }
    }

    fn parse_header(&mut self, mode: HeaderMode) -> Result<Section, ParseError> {
        let open = self.mark();
        self.bump(); // '['
        let tag = match mode {
            HeaderMode::Simple => {
                let start = self.pos;
                loop {
                    match self.peek() {
                        None => {
                            return Err(self.header_unclosed(open));
                        }
                        Some(b'\n') => {
                            return Err(
                                self.err(ErrorKind::Syntax, "expected ']' before end of line")
                            );
                        }
                        Some(b']') => break,
                        Some(_) => self.pos += 1,
                    }
                }
                let name = self.src.get(start..self.pos).unwrap_or_default();
                self.pos += 1; // ']'
                if name.is_empty() {
                    return Err(self.err_at(open, ErrorKind::Syntax, "empty section name"));
                }
                name.to_owned()
            }
            HeaderMode::Attributes => {
                let start = self.pos;
                while self.peek().is_some_and(is_ident_char) {
                    self.pos += 1;
                }
                if start == self.pos {
                    return Err(match self.peek() {
                        None => self.header_unclosed(open),
                        c => self.err(
                            ErrorKind::Syntax,
                            format!("expected a section name, found {}", describe(c)),
                        ),
                    });
                }
                self.src.get(start..self.pos).unwrap_or_default().to_owned()
            }
        };
        let mut section = Section {
            tag,
            attributes: Vec::new(),
            properties: Vec::new(),
            line: open.line,
            mark: open,
            refs: Vec::new(),
        };
        if mode == HeaderMode::Attributes {
            loop {
                self.skip_inline_ws();
                match self.peek() {
                    None => {
                        return Err(self.header_unclosed(open));
                    }
                    Some(b']') => {
                        self.pos += 1;
                        break;
                    }
                    Some(c) if is_ident_start(c) => {
                        let attr = self.parse_attribute(open)?;
                        section.attributes.push(attr);
                    }
                    c => {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            format!("expected an attribute or ']', found {}", describe(c)),
                        ));
                    }
                }
            }
            section.refs.append(&mut self.refs);
        }
        self.expect_line_end("the section header")?;
        Ok(section)
    }

    fn parse_attribute(&mut self, open: Mark) -> Result<Property, ParseError> {
        let mark = self.mark();
        let start = self.pos;
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        let name = self.src.get(start..self.pos).unwrap_or_default().to_owned();
        match self.peek() {
            Some(b'=') => self.pos += 1,
            None => {
                return Err(self.header_unclosed(open));
            }
            c => {
                return Err(self.err(
                    ErrorKind::Syntax,
                    format!(
                        "expected '=' after attribute '{name}', found {}",
                        describe(c)
                    ),
                ));
            }
        }
        if self.peek().is_none() {
            return Err(self.header_unclosed(open));
        }
        self.property_value(name, mark)
    }

    /// The value of a `name=value` (the cursor on its first character), kept with
    /// its original text.
    fn property_value(&mut self, name: String, mark: Mark) -> Result<Property, ParseError> {
        let value_mark = self.mark();
        let vstart = self.pos;
        let value = self.value()?;
        let text = self
            .src
            .get(vstart..self.pos)
            .unwrap_or_default()
            .to_owned();
        Ok(Property {
            name,
            text,
            value,
            line: mark.line,
            mark,
            value_mark,
        })
    }

    fn parse_property_line(&mut self) -> Result<Property, ParseError> {
        let mark = self.mark();
        let name = match self.peek() {
            Some(b'"') => self.string()?,
            _ => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    if c <= b' ' || matches!(c, b'=' | b'"' | b'[' | b']' | b'{' | b'}' | b';') {
                        break;
                    }
                    self.pos += 1;
                }
                if start == self.pos {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!(
                            "expected a key or a section, found {}",
                            describe(self.peek())
                        ),
                    ));
                }
                self.src.get(start..self.pos).unwrap_or_default().to_owned()
            }
        };
        self.skip_inline_ws();
        match self.peek() {
            Some(b'=') => self.pos += 1,
            None => {
                return Err(self.err(
                    ErrorKind::Truncated,
                    format!("expected '=' after key '{name}', found end of input"),
                ));
            }
            c => {
                return Err(self.err(
                    ErrorKind::Syntax,
                    format!("expected '=' after key '{name}', found {}", describe(c)),
                ));
            }
        }
        self.skip_value_ws();
        let property = self.property_value(name, mark)?;
        self.expect_line_end("the value")?;
        Ok(property)
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(
                ErrorKind::Syntax,
                format!("values nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Literal, ParseError> {
        self.skip_value_ws();
        match self.peek() {
            None => Err(self.err(ErrorKind::Truncated, "expected a value, found end of input")),
            Some(b'"') => Ok(Literal::String(self.string()?)),
            Some(b'&') => {
                self.pos += 1;
                if self.peek() != Some(b'"') {
                    return Err(self.err(ErrorKind::Syntax, "expected '\"' after '&'"));
                }
                Ok(Literal::StringName(self.string()?))
            }
            Some(b'^') => {
                self.pos += 1;
                if self.peek() != Some(b'"') {
                    return Err(self.err(ErrorKind::Syntax, "expected '\"' after '^'"));
                }
                Ok(Literal::NodePath(self.string()?))
            }
            Some(b'[') => self.array(),
            Some(b'{') => self.dictionary(),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) if is_ident_start(c) => self.identifier_value(),
            Some(b'\'') => Err(self.err(
                ErrorKind::Syntax,
                "single quotes are not string delimiters in Godot text; use '\"'",
            )),
            c => Err(self.err(
                ErrorKind::Syntax,
                format!("unexpected {}; expected a value", describe(c)),
            )),
        }
    }

    /// A `"…"` string (the cursor is on the opening quote), escapes resolved
    /// the way Godot's VariantParser resolves them.
    fn string(&mut self) -> Result<String, ParseError> {
        let open = self.mark();
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escapes, borrow the slice.
        loop {
            match self.peek() {
                None => {
                    return Err(self.string_unclosed(open));
                }
                Some(b'"') => {
                    let s = self.src.get(start..self.pos).unwrap_or_default().to_owned();
                    self.pos += 1;
                    return Ok(s);
                }
                Some(b'\\') => break,
                Some(_) => self.bump(),
            }
        }
        let mut out = String::from(self.src.get(start..self.pos).unwrap_or_default());
        let mut lead_surrogate: Option<u32> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.string_unclosed(open));
            };
            if c == b'"' {
                self.pos += 1;
                if lead_surrogate.is_some() {
                    return Err(self.err(ErrorKind::Syntax, "unpaired UTF-16 lead surrogate"));
                }
                return Ok(out);
            }
            if c != b'\\' {
                if lead_surrogate.is_some() {
                    return Err(self.err(ErrorKind::Syntax, "unpaired UTF-16 lead surrogate"));
                }
                // Copy a run of plain bytes at once (keeps UTF-8 intact).
                let run = self.pos;
                while self.peek().is_some_and(|c| c != b'"' && c != b'\\') {
                    self.bump();
                }
                out.push_str(self.src.get(run..self.pos).unwrap_or_default());
                continue;
            }
            let esc = self.mark();
            self.pos += 1;
            let Some(next) = self.src.get(self.pos..).and_then(|s| s.chars().next()) else {
                return Err(self.string_unclosed(open));
            };
            let code: u32 = match next {
                'b' => 8,
                't' => 9,
                'n' => 10,
                'f' => 12,
                'r' => 13,
                'u' | 'U' => {
                    let len = if next == 'U' { 6 } else { 4 };
                    self.pos += 1;
                    let hex = self.src.get(self.pos..self.pos + len);
                    let Some(hex) = hex.filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) else {
                        if self.b.len() < self.pos + len {
                            return Err(self.string_unclosed(open));
                        }
                        return Err(self.err_at(
                            esc,
                            ErrorKind::Syntax,
                            "malformed hex escape in string",
                        ));
                    };
                    let v = u32::from_str_radix(hex, 16).map_err(|_| {
                        self.err_at(esc, ErrorKind::Syntax, "malformed hex escape in string")
                    })?;
                    self.pos += len;
                    self.push_code(&mut out, &mut lead_surrogate, v, esc)?;
                    continue;
                }
                other => other as u32,
            };
            self.pos += next.len_utf8();
            if next == '\n' {
                self.line = self.line.saturating_add(1);
                self.line_start = self.pos;
            }
            self.push_code(&mut out, &mut lead_surrogate, code, esc)?;
        }
    }

    fn push_code(
        &self,
        out: &mut String,
        lead: &mut Option<u32>,
        code: u32,
        esc: Mark,
    ) -> Result<(), ParseError> {
        let code = if (code & 0xFFFF_FC00) == 0xD800 {
            if lead.is_some() {
                return Err(self.err_at(esc, ErrorKind::Syntax, "unpaired UTF-16 lead surrogate"));
            }
            *lead = Some(code);
            return Ok(());
        } else if (code & 0xFFFF_FC00) == 0xDC00 {
            let Some(l) = lead.take() else {
                return Err(self.err_at(esc, ErrorKind::Syntax, "unpaired UTF-16 trail surrogate"));
            };
            ((l - 0xD800) << 10) + (code - 0xDC00) + 0x10000
        } else {
            if lead.is_some() {
                return Err(self.err_at(esc, ErrorKind::Syntax, "unpaired UTF-16 lead surrogate"));
            }
            code
        };
        match char::from_u32(code) {
            Some(ch) => {
                out.push(ch);
                Ok(())
            }
            None => Err(self.err_at(
                esc,
                ErrorKind::Syntax,
                format!("escape \\U{code:06X} is not a Unicode scalar value"),
            )),
        }
    }

    fn number(&mut self) -> Result<Literal, ParseError> {
        let mark = self.mark();
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
            if self.peek().is_some_and(is_ident_start) {
                let istart = self.pos;
                while self.peek().is_some_and(is_ident_char) {
                    self.pos += 1;
                }
                if self.src.get(istart..self.pos) == Some("inf") {
                    return Ok(Literal::Float(f64::NEG_INFINITY));
                }
                return Err(self.err_at(mark, ErrorKind::Syntax, "expected a number after '-'"));
            }
        }
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.err(
                ErrorKind::Syntax,
                format!("expected a digit, found {}", describe(self.peek())),
            ));
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            is_float = true;
            self.pos += 1;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.err(ErrorKind::Syntax, "expected digits in the exponent"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        let text = self.src.get(start..self.pos).unwrap_or_default();
        if is_float {
            text.parse::<f64>().map(Literal::Float).map_err(|_| {
                self.err_at(mark, ErrorKind::Syntax, format!("invalid number '{text}'"))
            })
        } else {
            text.parse::<i64>().map(Literal::Int).map_err(|_| {
                self.err_at(
                    mark,
                    ErrorKind::Syntax,
                    format!("integer '{text}' does not fit in 64 bits"),
                )
            })
        }
    }

    fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        self.src.get(start..self.pos).unwrap_or_default()
    }

    fn identifier_value(&mut self) -> Result<Literal, ParseError> {
        let mark = self.mark();
        let name = self.ident();
        match name {
            "true" => return Ok(Literal::Bool(true)),
            "false" => return Ok(Literal::Bool(false)),
            "null" | "nil" => return Ok(Literal::Nil),
            "inf" => return Ok(Literal::Float(f64::INFINITY)),
            "inf_neg" => return Ok(Literal::Float(f64::NEG_INFINITY)),
            "nan" => return Ok(Literal::Float(f64::NAN)),
            _ => {}
        }
        self.enter()?;
        let result = self.constructor(name, mark);
        self.depth -= 1;
        result
    }

    fn constructor(&mut self, name: &'a str, mark: Mark) -> Result<Literal, ParseError> {
        let mut full_name = name;
        if matches!(name, "Array" | "Dictionary") && self.peek() == Some(b'[') {
            let start = mark.offset;
            self.type_parameters(mark)?;
            full_name = self.src.get(start..self.pos).unwrap_or(name);
        }
        self.skip_value_ws();
        match self.peek() {
            Some(b'(') => self.pos += 1,
            None => {
                return Err(self.err_at(
                    mark,
                    ErrorKind::Truncated,
                    format!("expected '(' after '{full_name}', found end of input"),
                ));
            }
            c => {
                return Err(self.err_at(
                    mark,
                    ErrorKind::Syntax,
                    format!(
                        "unknown identifier '{full_name}' (found {} after it)",
                        describe(c)
                    ),
                ));
            }
        }
        if name == "Object" {
            return self.object(mark);
        }
        if matches!(full_name, "ExtResource" | "SubResource") {
            let external = full_name == "ExtResource";
            self.skip_value_ws();
            // Godot's loader takes a string id, or a number (the integer ids of
            // format=2 files: `SubResource( 1 )`), used as its decimal text.
            let (id, start, end) = match self.peek() {
                Some(b'"') => {
                    let start = self.pos + 1;
                    let id = self.string()?;
                    (id, start, self.pos.saturating_sub(1))
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.pos;
                    match self.number()? {
                        Literal::Int(i) => (i.to_string(), start, self.pos),
                        _ => {
                            return Err(self.err_at(
                                mark,
                                ErrorKind::Syntax,
                                format!("{full_name}(…) takes one string or integer id"),
                            ));
                        }
                    }
                }
                _ => {
                    return Err(self.err_at(
                        mark,
                        ErrorKind::Syntax,
                        format!("{full_name}(…) takes one string or integer id"),
                    ));
                }
            };
            self.skip_value_ws();
            match self.peek() {
                Some(b')') => self.pos += 1,
                None => return Err(self.unclosed(mark, &format!("{full_name}("))),
                _ => {
                    return Err(self.err_at(
                        mark,
                        ErrorKind::Syntax,
                        format!("{full_name}(…) takes one string or integer id"),
                    ));
                }
            }
            let escaped_id = (self.src.get(start..end) != Some(id.as_str())).then(|| id.clone());
            self.refs.push(RefSite {
                external,
                id_range: start..end,
                escaped_id,
                mark,
            });
            return Ok(if external {
                Literal::ExtResource(id)
            } else {
                Literal::SubResource(id)
            });
        }
        let args = self.arguments(mark, full_name)?;
        let single_string = |args: Vec<Literal>, what: &str| -> Result<String, ParseError> {
            match <[Literal; 1]>::try_from(args) {
                Ok([Literal::String(s)]) => Ok(s),
                _ => Err(self.err_at(
                    mark,
                    ErrorKind::Syntax,
                    format!("{what}(…) takes exactly one string argument"),
                )),
            }
        };
        match full_name {
            "NodePath" => Ok(Literal::NodePath(single_string(args, "NodePath")?)),
            _ => {
                if let Some(expected) = fixed_arity(full_name)
                    && !expected.contains(&args.len())
                {
                    return Err(self.err_at(
                        mark,
                        ErrorKind::Syntax,
                        format!(
                            "{full_name} takes {} arguments, found {}",
                            expected
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(" or "),
                            args.len()
                        ),
                    ));
                }
                Ok(Literal::Constructor {
                    name: constructor_name(full_name),
                    args,
                })
            }
        }
    }

    /// `[int]`, `[ExtResource("1_x")]`, `[String, int]` after `Array`/`Dictionary`.
    fn type_parameters(&mut self, mark: Mark) -> Result<(), ParseError> {
        self.pos += 1; // '['
        let mut need_comma = false;
        loop {
            self.skip_value_ws();
            match self.peek() {
                None => {
                    return Err(self.err_at(
                        mark,
                        ErrorKind::Truncated,
                        "type parameter list is never closed with ']'",
                    ));
                }
                Some(b']') if need_comma => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b',') if need_comma => {
                    self.pos += 1;
                    need_comma = false;
                }
                Some(c) if !need_comma && is_ident_start(c) => {
                    let tmark = self.mark();
                    let name = self.ident();
                    self.skip_value_ws();
                    if self.peek() == Some(b'(') {
                        (self.pos, self.line, self.line_start) =
                            (tmark.offset, tmark.line, tmark.line_start);
                        self.identifier_value()?;
                    } else if name.is_empty() {
                        return Err(self.err(ErrorKind::Syntax, "expected a type name"));
                    }
                    need_comma = true;
                }
                c => {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!("unexpected {} in a type parameter list", describe(c)),
                    ));
                }
            }
        }
    }

    /// Comma-separated values up to `)`; the cursor is after `(`.
    fn arguments(&mut self, mark: Mark, name: &str) -> Result<Vec<Literal>, ParseError> {
        let mut args = Vec::new();
        self.skip_value_ws();
        if self.peek() == Some(b')') {
            self.pos += 1;
            return Ok(args);
        }
        loop {
            if self.at_eof_after_ws() {
                return Err(self.unclosed(mark, &format!("{name}(")));
            }
            args.push(self.value()?);
            self.skip_value_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b')') => {
                    self.pos += 1;
                    return Ok(args);
                }
                None => return Err(self.unclosed(mark, &format!("{name}("))),
                c => {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!("expected ',' or ')' in {name}(…), found {}", describe(c)),
                    ));
                }
            }
        }
    }

    fn at_eof_after_ws(&mut self) -> bool {
        self.skip_value_ws();
        self.peek().is_none()
    }

    fn header_unclosed(&self, open: Mark) -> ParseError {
        self.err_at(
            open,
            ErrorKind::Truncated,
            "section header is never closed with ']'",
        )
    }

    fn string_unclosed(&self, open: Mark) -> ParseError {
        self.err_at(
            open,
            ErrorKind::UnterminatedString,
            "string is never closed with '\"'",
        )
    }

    fn unclosed(&self, mark: Mark, what: &str) -> ParseError {
        self.err_at(
            mark,
            ErrorKind::Truncated,
            format!("'{what}' opened here is never closed"),
        )
    }

    /// `Object(Class, "prop": value, …)`; the cursor is after `(`.
    fn object(&mut self, mark: Mark) -> Result<Literal, ParseError> {
        self.skip_value_ws();
        if self.peek().is_none() {
            return Err(self.unclosed(mark, "Object("));
        }
        if !self.peek().is_some_and(is_ident_start) {
            return Err(self.err(ErrorKind::Syntax, "expected a class name in Object(…)"));
        }
        let class = self.ident().to_owned();
        let mut properties = Vec::new();
        loop {
            self.skip_value_ws();
            match self.peek() {
                None => return Err(self.unclosed(mark, "Object(")),
                Some(b')') => {
                    self.pos += 1;
                    return Ok(Literal::Object { class, properties });
                }
                Some(b',') => self.pos += 1,
                c => {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!("expected ',' or ')' in Object(…), found {}", describe(c)),
                    ));
                }
            }
            self.skip_value_ws();
            match self.peek() {
                None => return Err(self.unclosed(mark, "Object(")),
                Some(b')') => continue,
                Some(b'"') => {}
                c => {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!(
                            "expected a quoted property name in Object(…), found {}",
                            describe(c)
                        ),
                    ));
                }
            }
            let name = self.string()?;
            self.colon(mark, "Object(", format_args!("\"{name}\" in Object(…)"))?;
            let value = self.value()?;
            properties.push(ObjectProperty { name, value });
        }
    }

    fn array(&mut self) -> Result<Literal, ParseError> {
        let items = self.list(b']', "array", |p, _| p.value())?;
        Ok(Literal::Array(items))
    }

    fn dictionary(&mut self) -> Result<Literal, ParseError> {
        let entries = self.list(b'}', "dictionary", |p, mark| {
            let key = p.value()?;
            p.colon(mark, "{", format_args!("a dictionary key"))?;
            let value = p.value()?;
            Ok(DictEntry { key, value })
        })?;
        Ok(Literal::Dictionary(entries))
    }

    /// The comma-separated items of an array or a dictionary (a trailing comma
    /// allowed, as Godot's parser allows it); the cursor is on the opening bracket.
    fn list<T>(
        &mut self,
        close: u8,
        what: &str,
        mut item: impl FnMut(&mut Self, Mark) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, ParseError> {
        let mark = self.mark();
        let open = if close == b']' { "[" } else { "{" };
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        let mut need_comma = false;
        loop {
            self.skip_value_ws();
            match self.peek() {
                None => return Err(self.unclosed(mark, open)),
                Some(c) if c == close => {
                    self.pos += 1;
                    break;
                }
                Some(b',') if need_comma => {
                    self.pos += 1;
                    need_comma = false;
                }
                c if need_comma => {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        format!(
                            "expected ',' or '{}' in {what}, found {}",
                            char::from(close),
                            describe(c)
                        ),
                    ));
                }
                _ => {
                    items.push(item(self, mark)?);
                    need_comma = true;
                }
            }
        }
        self.depth -= 1;
        Ok(items)
    }

    /// The `:` after an Object property name or a dictionary key, and a value after
    /// it; `opened` is the construct a missing end leaves unclosed.
    fn colon(
        &mut self,
        mark: Mark,
        opened: &str,
        after: std::fmt::Arguments<'_>,
    ) -> Result<(), ParseError> {
        self.skip_value_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            None => return Err(self.unclosed(mark, opened)),
            c => {
                return Err(self.err(
                    ErrorKind::Syntax,
                    format!("expected ':' after {after}, found {}", describe(c)),
                ));
            }
        }
        if self.at_eof_after_ws() {
            return Err(self.unclosed(mark, opened));
        }
        Ok(())
    }
}

/// Godot's built-in type names are borrowed, not allocated, per value.
fn constructor_name(name: &str) -> Cow<'static, str> {
    match TYPE_NAMES.iter().chain(&["Resource"]).find(|k| **k == name) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(name.to_owned()),
    }
}

/// Argument counts Godot's VariantParser insists on for the math types.
fn fixed_arity(name: &str) -> Option<&'static [usize]> {
    Some(match name {
        "Vector2" | "Vector2i" => &[2],
        "Vector3" | "Vector3i" => &[3],
        "Vector4" | "Vector4i" | "Rect2" | "Rect2i" | "Plane" | "Quaternion" | "Quat" => &[4],
        "Color" => &[3, 4],
        "Transform2D" | "AABB" => &[6],
        "Basis" => &[9],
        "Transform3D" | "Transform" => &[12],
        "Projection" => &[16],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_to_their_typed_view() {
        assert_eq!(parse_value("42").unwrap(), Literal::Int(42));
        assert_eq!(parse_value("-1.5e3").unwrap(), Literal::Float(-1500.0));
        assert_eq!(
            parse_value("-inf").unwrap(),
            Literal::Float(f64::NEG_INFINITY)
        );
        assert!(matches!(parse_value("nan").unwrap(), Literal::Float(f) if f.is_nan()));
        assert_eq!(
            parse_value(r#""a\"b\n\u00e9\uD83D\uDE00""#).unwrap(),
            Literal::String("a\"b\né😀".into())
        );
        assert_eq!(
            parse_value(r#"&"idle""#).unwrap(),
            Literal::StringName("idle".into())
        );
        assert_eq!(
            parse_value(r#"NodePath("A/B")"#).unwrap(),
            Literal::NodePath("A/B".into())
        );
        assert_eq!(
            parse_value("Vector2(1, -2.5)").unwrap(),
            Literal::Constructor {
                name: "Vector2".into(),
                args: vec![Literal::Int(1), Literal::Float(-2.5)]
            }
        );
        assert_eq!(
            parse_value("Array[int]([1, 2,])").unwrap(),
            Literal::Constructor {
                name: "Array[int]".into(),
                args: vec![Literal::Array(vec![Literal::Int(1), Literal::Int(2)])]
            }
        );
        let d = parse_value("{\n\"a\": [1, {}],\n2: null\n}").unwrap();
        assert_eq!(d.dict_get("a").unwrap().as_array().unwrap().len(), 2);
    }

    #[test]
    fn wrong_arity_and_unknown_identifiers_are_errors() {
        let e = parse_value("Vector2(1, 2, 3)").unwrap_err();
        assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::Syntax, 1, 1));
        let e = parse_value("[1, banana]").unwrap_err();
        assert_eq!((e.kind(), e.column()), (ErrorKind::Syntax, 5));
        let e = parse_value("99999999999999999999").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert_eq!(parse_value(&deep).unwrap_err().kind(), ErrorKind::Syntax);
    }

    #[test]
    fn json_of_non_finite_floats_is_the_value_models() {
        let v = crate::variant::from_variant_text("inf");
        assert_eq!(
            v.to_json(),
            serde_json::json!({"$type": "float", "value": "inf"})
        );
    }
}
