//! The one shape every user-facing failure takes: a [`ToolError`] with a stable code,
//! a message, and where it helps the parameter at fault, the token required to
//! proceed and a hint for recovery.
//!
//! A user's mistake (a bad path, a missing confirm, a malformed scene) is a tool
//! error the agent can read and act on; it is returned as an MCP tool result with
//! `isError: true` and the same fields in `structuredContent.error`. Bugs are logged
//! and reported as `INTERNAL`, never as a panic across the MCP boundary.

use std::fmt;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

/// Stable, machine-readable error codes. Clients and tests match on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Arguments did not match the tool's schema (wrong type, unknown field, missing field).
    InvalidParams,
    /// A file-path parameter was not a contained `res://` path.
    PathRefused,
    /// The named file, node or resource does not exist.
    ResourceNotFound,
    /// A Godot text file could not be parsed; carries line and column.
    ParseError,
    /// A precondition of the call did not hold; `required` names the token.
    PreconditionFailed,
    /// An argument or a file is larger than this server accepts.
    TooLarge,
    /// A compare-and-swap write found that the target changed; nothing was written.
    Stale,
    /// An idempotency identity was reused in a different context; nothing was written.
    Conflict,
    /// Writes are refused until quarantined transactions are resolved.
    WriteGateClosed,
    /// The tool is not enabled in this server (toolset disabled).
    ToolDisabled,
    /// The approval gate denied the call.
    ApprovalDenied,
    /// An operating-system error while reading or writing.
    Io,
    /// The editor did not answer in time. On a mutating command `details.may_have_applied`
    /// is true: the editor drains commands serially and may still run it.
    Timeout,
    /// The editor ran the command and Godot refused it. The transaction's status says
    /// whether that left the project as it was (compensated, by proof) or not.
    EditorError,
    /// A bug in the server; details are in its log.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidParams => "INVALID_PARAMS",
            Self::PathRefused => "PATH_REFUSED",
            Self::ResourceNotFound => "RESOURCE_NOT_FOUND",
            Self::ParseError => "PARSE_ERROR",
            Self::PreconditionFailed => "PRECONDITION_FAILED",
            Self::TooLarge => "TOO_LARGE",
            Self::Stale => "STALE",
            Self::Conflict => "CONFLICT",
            Self::WriteGateClosed => "WRITE_GATE_CLOSED",
            Self::ToolDisabled => "TOOL_DISABLED",
            Self::ApprovalDenied => "APPROVAL_DENIED",
            Self::Io => "IO_ERROR",
            Self::Timeout => "TIMEOUT",
            Self::EditorError => "EDITOR_ERROR",
            Self::Internal => "INTERNAL",
        }
    }
}

/// A structured, user-actionable tool failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// The parameter at fault, as a JSON path into the arguments (`path`, `entries[2].path`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The token the caller must supply or establish to proceed (`confirm`, `bridge_connected` …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Extra facts (line and column of a parse error, quarantined transaction ids …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            param: None,
            required: None,
            hint: None,
            details: None,
        }
    }

    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    pub fn required(mut self, token: impl Into<String>) -> Self {
        self.required = Some(token.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub fn invalid_params(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message).param(param)
    }

    /// An optional numeric argument `param`: its value, or `default` when it is absent;
    /// a value outside `range` is refused (INVALID_PARAMS) with `message`.
    pub fn arg_in<T: PartialOrd>(
        param: &str,
        value: Option<T>,
        default: T,
        range: std::ops::RangeInclusive<T>,
        message: impl Into<String>,
    ) -> Result<T, Self> {
        let v = value.unwrap_or(default);
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(Self::invalid_params(param, message))
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ResourceNotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
            .hint("This is a bug in godot-mcp; the server log (stderr) has details.")
    }

    /// Map an I/O error on a project file to the right code, without leaking host paths.
    pub fn io(res_path: &str, err: &std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound => Self::not_found(format!("{res_path} does not exist"))
                .hint("List what exists with list_files; paths are case-sensitive res:// paths."),
            std::io::ErrorKind::IsADirectory => Self::new(
                ErrorCode::InvalidParams,
                format!("{res_path} is a directory"),
            ),
            _ => Self::new(
                ErrorCode::Io,
                format!("could not access {res_path}: {}", err.kind()),
            ),
        }
    }

    /// The one-line text form: `CODE: message [required=token]`.
    pub fn text(&self) -> String {
        let mut s = format!("{}: {}", self.code.as_str(), self.message);
        if let Some(required) = &self.required {
            s.push_str(&format!(" [required={required}]"));
        }
        s
    }

    /// As an MCP tool result: `isError: true`, the text form, and the fields under
    /// `structuredContent.error`.
    pub fn into_call_result(self) -> CallToolResult {
        let text = match &self.hint {
            Some(hint) => format!("{}\nhint: {hint}", self.text()),
            None => self.text(),
        };
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({ "error": self }));
        result
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for ToolError {}

/// A value the text writers of godot-mcp-formats refuse is the agent's mistake:
/// `INVALID_PARAMS`, naming the parameter, with the writer's message and hint.
impl From<godot_mcp_formats::InputError> for ToolError {
    fn from(e: godot_mcp_formats::InputError) -> Self {
        let err = Self::invalid_params(e.param, e.message);
        match e.hint {
            Some(hint) => err.hint(hint),
            None => err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_carries_required_token() {
        let e = ToolError::new(
            ErrorCode::PreconditionFailed,
            "This call discards unsaved changes. Set confirm=True to proceed.",
        )
        .required("confirm");
        assert_eq!(
            e.text(),
            "PRECONDITION_FAILED: This call discards unsaved changes. Set confirm=True to proceed. [required=confirm]"
        );
    }

    #[test]
    fn call_result_is_error_with_structured_fields() {
        let r = ToolError::invalid_params("path", "bad").into_call_result();
        assert_eq!(r.is_error, Some(true));
        let s = r.structured_content.unwrap();
        assert_eq!(s["error"]["code"], "INVALID_PARAMS");
        assert_eq!(s["error"]["param"], "path");
    }

    /// What an agent sees for a value formats refuses is the server's own
    /// INVALID_PARAMS error: the same message, parameter and hint.
    #[test]
    fn a_refused_value_is_invalid_params_naming_the_parameter() {
        let refused = godot_mcp_formats::variant::check_text("Vector2(1, 2", "value_text")
            .expect_err("an open bracket is refused");
        let e = ToolError::from(refused);
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert_eq!(e.param.as_deref(), Some("value_text"));
        assert_eq!(
            e.message,
            "`value_text` is not usable Variant text: a bracket or string is not closed"
        );
        assert!(
            e.hint
                .as_deref()
                .unwrap()
                .starts_with("Give Variant text on one line")
        );
        let e = ToolError::from(godot_mcp_formats::InputError::new("events[0]", "m"));
        assert_eq!((e.param.as_deref(), e.hint), (Some("events[0]"), None));
    }

    /// An optional bounded argument: its default when absent, itself when in range
    /// (both ends included), and INVALID_PARAMS naming it when outside.
    #[test]
    fn a_bounded_argument_defaults_and_refuses_outside_its_range() {
        let arg = |v| ToolError::arg_in("limit", v, 50, 1..=200, "limit must be 1–200");
        assert_eq!(arg(None).unwrap(), 50);
        assert_eq!(arg(Some(1)).unwrap(), 1);
        assert_eq!(arg(Some(200)).unwrap(), 200);
        for bad in [0, 201] {
            let e = arg(Some(bad)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidParams);
            assert_eq!(e.param.as_deref(), Some("limit"));
            assert_eq!(e.message, "limit must be 1–200");
        }
    }
}
