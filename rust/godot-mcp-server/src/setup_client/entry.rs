//! The entry `setup-client` writes, and how writing it fails: shared by every
//! format's merge.

use std::fmt;

use crate::error::ErrorCode;

/// A refusal or failure, with the stable code of [`ErrorCode`].
#[derive(Debug)]
pub(crate) struct SetupError {
    pub code: ErrorCode,
    pub message: String,
}

impl SetupError {
    pub(super) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(super) fn exit_code(&self) -> u8 {
        if self.code == ErrorCode::Io { 1 } else { 2 }
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

/// The server entry to write: a stdio command with its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
}

/// A configuration file that is not the shape its format needs.
pub(super) fn shape(message: String) -> SetupError {
    SetupError::new(ErrorCode::ParseError, message)
}
