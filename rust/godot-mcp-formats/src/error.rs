//! The one error type every parser in this crate returns.
//!
//! Each variant carries a 1-based `line` and `column` (columns count Unicode
//! scalar values, not bytes) and a human message. A malformed file is always an
//! error: the parsers never return a partial result.

use serde::Serialize;

/// Why a Godot text file could not be parsed, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ParseError {
    /// The input ended inside a construct (section header, array, dictionary,
    /// constructor, value). The position is where that construct starts.
    #[error("{line}:{column}: truncated input: {message}")]
    Truncated {
        line: u32,
        column: u32,
        message: String,
    },
    /// A `"` string with no closing quote. The position is the opening quote.
    #[error("{line}:{column}: unterminated string: {message}")]
    UnterminatedString {
        line: u32,
        column: u32,
        message: String,
    },
    /// A character or token that the grammar does not allow here (stray or
    /// single quotes, missing `=`, garbage after a value, bad escape, …).
    #[error("{line}:{column}: syntax error: {message}")]
    Syntax {
        line: u32,
        column: u32,
        message: String,
    },
    /// A section kind that this file type does not have (e.g. `[node]` in a `.tres`).
    #[error("{line}:{column}: unknown section: {message}")]
    UnknownSection {
        line: u32,
        column: u32,
        message: String,
    },
    /// Two `[ext_resource]` or two `[sub_resource]` sections with the same id.
    #[error("{line}:{column}: duplicate resource id: {message}")]
    DuplicateResourceId {
        line: u32,
        column: u32,
        message: String,
    },
    /// `ExtResource("…")` / `SubResource("…")` naming an id not declared before it.
    #[error("{line}:{column}: unknown resource reference: {message}")]
    UnknownResourceReference {
        line: u32,
        column: u32,
        message: String,
    },
    /// A node whose `parent`, a connection's `from`/`to`, or an `[editable]`
    /// path, that names no node of the scene.
    #[error("{line}:{column}: unknown node: {message}")]
    UnknownNode {
        line: u32,
        column: u32,
        message: String,
    },
    /// Two nodes with the same path.
    #[error("{line}:{column}: duplicate node: {message}")]
    DuplicateNode {
        line: u32,
        column: u32,
        message: String,
    },
    /// The file header is missing, or its `format` / `config_version` is
    /// missing or not one this crate supports.
    #[error("{line}:{column}: unsupported format: {message}")]
    UnsupportedFormat {
        line: u32,
        column: u32,
        message: String,
    },
    /// Well-formed text with the wrong shape: a required attribute missing or of
    /// the wrong type, a second root node, properties where none may be, …
    #[error("{line}:{column}: invalid structure: {message}")]
    Structure {
        line: u32,
        column: u32,
        message: String,
    },
}

/// The variant of a [`ParseError`], without its payload (handy for matching
/// and for stable error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    Truncated,
    UnterminatedString,
    Syntax,
    UnknownSection,
    DuplicateResourceId,
    UnknownResourceReference,
    UnknownNode,
    DuplicateNode,
    UnsupportedFormat,
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
}

impl ParseError {
    pub(crate) fn new(kind: ErrorKind, pos: Position, message: impl Into<String>) -> Self {
        let (line, column, message) = (pos.line, pos.column, message.into());
        match kind {
            ErrorKind::Truncated => Self::Truncated {
                line,
                column,
                message,
            },
            ErrorKind::UnterminatedString => Self::UnterminatedString {
                line,
                column,
                message,
            },
            ErrorKind::Syntax => Self::Syntax {
                line,
                column,
                message,
            },
            ErrorKind::UnknownSection => Self::UnknownSection {
                line,
                column,
                message,
            },
            ErrorKind::DuplicateResourceId => Self::DuplicateResourceId {
                line,
                column,
                message,
            },
            ErrorKind::UnknownResourceReference => Self::UnknownResourceReference {
                line,
                column,
                message,
            },
            ErrorKind::UnknownNode => Self::UnknownNode {
                line,
                column,
                message,
            },
            ErrorKind::DuplicateNode => Self::DuplicateNode {
                line,
                column,
                message,
            },
            ErrorKind::UnsupportedFormat => Self::UnsupportedFormat {
                line,
                column,
                message,
            },
            ErrorKind::Structure => Self::Structure {
                line,
                column,
                message,
            },
        }
    }

    /// Which kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Truncated { .. } => ErrorKind::Truncated,
            Self::UnterminatedString { .. } => ErrorKind::UnterminatedString,
            Self::Syntax { .. } => ErrorKind::Syntax,
            Self::UnknownSection { .. } => ErrorKind::UnknownSection,
            Self::DuplicateResourceId { .. } => ErrorKind::DuplicateResourceId,
            Self::UnknownResourceReference { .. } => ErrorKind::UnknownResourceReference,
            Self::UnknownNode { .. } => ErrorKind::UnknownNode,
            Self::DuplicateNode { .. } => ErrorKind::DuplicateNode,
            Self::UnsupportedFormat { .. } => ErrorKind::UnsupportedFormat,
            Self::Structure { .. } => ErrorKind::Structure,
        }
    }

    fn parts(&self) -> (u32, u32, &str) {
        match self {
            Self::Truncated {
                line,
                column,
                message,
            }
            | Self::UnterminatedString {
                line,
                column,
                message,
            }
            | Self::Syntax {
                line,
                column,
                message,
            }
            | Self::UnknownSection {
                line,
                column,
                message,
            }
            | Self::DuplicateResourceId {
                line,
                column,
                message,
            }
            | Self::UnknownResourceReference {
                line,
                column,
                message,
            }
            | Self::UnknownNode {
                line,
                column,
                message,
            }
            | Self::DuplicateNode {
                line,
                column,
                message,
            }
            | Self::UnsupportedFormat {
                line,
                column,
                message,
            }
            | Self::Structure {
                line,
                column,
                message,
            } => (*line, *column, message),
        }
    }

    /// 1-based line of the error.
    pub fn line(&self) -> u32 {
        self.parts().0
    }

    /// 1-based column of the error, in characters.
    pub fn column(&self) -> u32 {
        self.parts().1
    }

    /// The human-readable message, without the position.
    pub fn message(&self) -> &str {
        self.parts().2
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
