//! The one error type every parser in this crate returns ([`ParseError`]), and the
//! one the text writers return for a value they refuse ([`InputError`]).
//!
//! A [`ParseError`] carries a 1-based `line` and `column` (columns count Unicode
//! scalar values, not bytes) and a human message. A malformed file is always an
//! error: the parsers never return a partial result.

use serde::Serialize;

/// Why a Godot text file could not be parsed, and where.
///
/// Serialized as `{"kind": "syntax", "line": 3, "column": 7, "message": "…"}`;
/// displayed as `3:7: syntax error: …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{line}:{column}: {}: {message}", .kind.describe())]
pub struct ParseError {
    kind: ErrorKind,
    line: u32,
    column: u32,
    message: String,
}

/// What kind of [`ParseError`] it is (handy for matching and for stable error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended inside a construct (section header, array, dictionary,
    /// constructor, value). The position is where that construct starts.
    Truncated,
    /// A `"` string with no closing quote. The position is the opening quote.
    UnterminatedString,
    /// A character or token that the grammar does not allow here (stray or
    /// single quotes, missing `=`, garbage after a value, bad escape, …).
    Syntax,
    /// A section kind that this file type does not have (e.g. `[node]` in a `.tres`).
    UnknownSection,
    /// Two `[ext_resource]` or two `[sub_resource]` sections with the same id.
    DuplicateResourceId,
    /// `ExtResource("…")` / `SubResource("…")` naming an id not declared before it.
    UnknownResourceReference,
    /// A node whose `parent`, a connection's `from`/`to`, or an `[editable]`
    /// path, that names no node of the scene.
    UnknownNode,
    /// Two nodes with the same path.
    DuplicateNode,
    /// The file header is missing, or its `format` / `config_version` is
    /// missing or not one this crate supports.
    UnsupportedFormat,
    /// Well-formed text with the wrong shape: a required attribute missing or of
    /// the wrong type, a second root node, properties where none may be, …
    Structure,
}

impl ErrorKind {
    /// A stable snake_case code, e.g. `"duplicate_node"`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::UnterminatedString => "unterminated_string",
            Self::Syntax => "syntax",
            Self::UnknownSection => "unknown_section",
            Self::DuplicateResourceId => "duplicate_resource_id",
            Self::UnknownResourceReference => "unknown_resource_reference",
            Self::UnknownNode => "unknown_node",
            Self::DuplicateNode => "duplicate_node",
            Self::UnsupportedFormat => "unsupported_format",
            Self::Structure => "structure",
        }
    }

    /// The words the error's text uses for the kind, e.g. `"syntax error"`.
    fn describe(self) -> &'static str {
        match self {
            Self::Truncated => "truncated input",
            Self::UnterminatedString => "unterminated string",
            Self::Syntax => "syntax error",
            Self::UnknownSection => "unknown section",
            Self::DuplicateResourceId => "duplicate resource id",
            Self::UnknownResourceReference => "unknown resource reference",
            Self::UnknownNode => "unknown node",
            Self::DuplicateNode => "duplicate node",
            Self::UnsupportedFormat => "unsupported format",
            Self::Structure => "invalid structure",
        }
    }
}

impl ParseError {
    pub(crate) fn new(kind: ErrorKind, pos: Position, message: impl Into<String>) -> Self {
        Self {
            kind,
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }

    /// Which kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// 1-based line of the error.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// 1-based column of the error, in characters.
    pub fn column(&self) -> u32 {
        self.column
    }

    /// The human-readable message, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A value an agent supplied that cannot be written as Godot text: the parameter
/// at fault, why, and (where one helps) how to give it instead. The server turns it
/// into its `INVALID_PARAMS` tool error, naming the same parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    /// The parameter at fault, as the agent named it (`value`, `events[2]`, …).
    pub param: String,
    pub message: String,
    pub hint: Option<String>,
}

impl InputError {
    pub fn new(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            param: param.into(),
            message: message.into(),
            hint: None,
        }
    }

    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// A 1-based line and column in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
}

/// Where a byte offset sits, cheaply: the line is tracked while scanning; the
/// column is only computed (from `line_start`) when an error needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    pub offset: usize,
    pub line: u32,
    pub line_start: usize,
}

impl Mark {
    pub(crate) fn position(self, src: &str) -> Position {
        let column = src
            .get(self.line_start..self.offset)
            .map_or(0, |s| s.chars().count());
        Position {
            line: self.line,
            column: u32::try_from(column).unwrap_or(u32::MAX).saturating_add(1),
        }
    }

    pub(crate) fn error(
        self,
        src: &str,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> ParseError {
        ParseError::new(kind, self.position(src), message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON and the text of an error are what clients match on: one field per
    /// fact, the kind as its snake_case code, and `line:column: kind words: message`.
    #[test]
    fn a_parse_error_keeps_its_json_and_text_forms() {
        let pos = Position { line: 3, column: 7 };
        let e = ParseError::new(ErrorKind::UnknownResourceReference, pos, "no \"1_a\"");
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"kind":"unknown_resource_reference","line":3,"column":7,"message":"no \"1_a\""}"#
        );
        assert_eq!(e.to_string(), "3:7: unknown resource reference: no \"1_a\"");
        let e = ParseError::new(ErrorKind::Structure, pos, "m");
        assert_eq!(e.to_string(), "3:7: invalid structure: m");
        assert_eq!(
            (e.kind(), e.line(), e.column(), e.message()),
            (ErrorKind::Structure, 3, 7, "m")
        );
    }
}
