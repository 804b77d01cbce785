//! The parser's cursor: bytes, line tracking and errors; section headers and
//! `key = value` lines.

use crate::error::{ErrorKind, Mark, ParseError};

use super::document::{HeaderMode, Property, RefSite, Section};

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 128;

pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
    pub(super) line: u32,
    pub(super) line_start: usize,
    pub(super) depth: u32,
    pub(super) refs: Vec<RefSite>,
}

pub(super) fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub(super) fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

pub(super) fn describe(c: Option<u8>) -> String {
    match c {
        None => "end of input".to_owned(),
        Some(b'\n') => "end of line".to_owned(),
        Some(c) if c.is_ascii_graphic() || c == b' ' => format!("'{}'", c as char),
        Some(c) => format!("byte 0x{c:02x}"),
    }
}

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str) -> Self {
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

    pub(super) fn mark(&self) -> Mark {
        Mark {
            offset: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    pub(super) fn err(&self, kind: ErrorKind, message: impl Into<String>) -> ParseError {
        self.mark().error(self.src, kind, message)
    }

    pub(super) fn err_at(
        &self,
        mark: Mark,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> ParseError {
        mark.error(self.src, kind, message)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    pub(super) fn bump(&mut self) {
        if let Some(&c) = self.b.get(self.pos) {
            self.pos += 1;
            if c == b'\n' {
                self.line = self.line.saturating_add(1);
                self.line_start = self.pos;
            }
        }
    }

    /// Spaces, tabs and carriage returns: what may sit inside a line.
    pub(super) fn skip_inline_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' || c > b' ' {
                break;
            }
            self.pos += 1;
        }
    }

    pub(super) fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// Any whitespace (like Godot, every byte <= 32), newlines and `;` comments.
    pub(super) fn skip_ws_and_comments(&mut self) {
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

    pub(super) fn skip_value_ws(&mut self) {
        self.skip_ws_and_comments();
    }

    /// After a header or a value: only blanks and a comment until the newline.
    pub(super) fn expect_line_end(&mut self, what: &str) -> Result<(), ParseError> {
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

    pub(super) fn parse_header(&mut self, mode: HeaderMode) -> Result<Section, ParseError> {
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

    pub(super) fn parse_attribute(&mut self, open: Mark) -> Result<Property, ParseError> {
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
    pub(super) fn property_value(
        &mut self,
        name: String,
        mark: Mark,
    ) -> Result<Property, ParseError> {
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

    pub(super) fn parse_property_line(&mut self) -> Result<Property, ParseError> {
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

    pub(super) fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(
                ErrorKind::Syntax,
                format!("values nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    pub(super) fn at_eof_after_ws(&mut self) -> bool {
        self.skip_value_ws();
        self.peek().is_none()
    }

    pub(super) fn header_unclosed(&self, open: Mark) -> ParseError {
        self.err_at(
            open,
            ErrorKind::Truncated,
            "section header is never closed with ']'",
        )
    }

    pub(super) fn string_unclosed(&self, open: Mark) -> ParseError {
        self.err_at(
            open,
            ErrorKind::UnterminatedString,
            "string is never closed with '\"'",
        )
    }

    pub(super) fn unclosed(&self, mark: Mark, what: &str) -> ParseError {
        self.err_at(
            mark,
            ErrorKind::Truncated,
            format!("'{what}' opened here is never closed"),
        )
    }
}
