//! Variant values: strings, numbers, constructors, objects, arrays, dictionaries.

use std::borrow::Cow;

use crate::error::{ErrorKind, Mark, ParseError};
use crate::literal::{DictEntry, Literal, ObjectProperty};
use crate::type_names::TYPE_NAMES;

use super::document::RefSite;
use super::parser::{Parser, describe, is_ident_char, is_ident_start};

impl<'a> Parser<'a> {
    pub(super) fn value(&mut self) -> Result<Literal, ParseError> {
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
    pub(super) fn string(&mut self) -> Result<String, ParseError> {
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

    pub(super) fn push_code(
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

    pub(super) fn number(&mut self) -> Result<Literal, ParseError> {
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

    pub(super) fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        self.src.get(start..self.pos).unwrap_or_default()
    }

    pub(super) fn identifier_value(&mut self) -> Result<Literal, ParseError> {
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

    pub(super) fn constructor(&mut self, name: &'a str, mark: Mark) -> Result<Literal, ParseError> {
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
    pub(super) fn type_parameters(&mut self, mark: Mark) -> Result<(), ParseError> {
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
    pub(super) fn arguments(&mut self, mark: Mark, name: &str) -> Result<Vec<Literal>, ParseError> {
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

    /// `Object(Class, "prop": value, …)`; the cursor is after `(`.
    pub(super) fn object(&mut self, mark: Mark) -> Result<Literal, ParseError> {
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

    pub(super) fn array(&mut self) -> Result<Literal, ParseError> {
        let items = self.list(b']', "array", |p, _| p.value())?;
        Ok(Literal::Array(items))
    }

    pub(super) fn dictionary(&mut self) -> Result<Literal, ParseError> {
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
    pub(super) fn list<T>(
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
    pub(super) fn colon(
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
