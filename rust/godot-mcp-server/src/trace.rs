//! The call trace (`serve --trace FILE`): one JSON line per tool call, appended and
//! flushed as the call ends, for measuring what agents do with the server
//! (`bench/agent-tasks/`, docs/performance.md):
//!
//! ```json
//! {"ts":1796540000.123,"tool":"create_nodes","duration_ms":4.21,"outcome":"ok","error_code":null,"bytes_in":310,"bytes_out":842}
//! ```
//!
//! - `ts`: when the call ended, Unix time in seconds (millisecond precision);
//! - `duration_ms`: from the pipeline's entry to its answer;
//! - `outcome`: `ok`; `refused` when the server turned the call down before running it
//!   (bad arguments, a contained-path refusal, a precondition, a gate, a disabled tool,
//!   or a client answer it waits for: `INPUT_REQUIRED`); `error` when it ran and failed;
//! - `error_code`: the error's code (docs/recovery.md), null when ok;
//! - `bytes_in`, `bytes_out`: the compact JSON of the arguments and of the answer (the
//!   result or the error object), each counted once; an image is counted as the
//!   reference in the result, not its PNG.
//!
//! A `run_commands` call is one line, under its own name. A line that cannot be written
//! is logged once and the call goes on: the trace measures, it never decides.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::Serialize;

use crate::error::ErrorCode;

/// An open trace file (append-only, `0600`).
#[derive(Debug)]
pub(crate) struct Trace {
    file: Mutex<std::fs::File>,
    warned: AtomicBool,
}

/// How a call ended, as a trace line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    Ok,
    Refused,
    Error,
}

impl Outcome {
    /// `refused`: nothing ran because of what was asked (or the gates); `error`: the
    /// call ran (or looked) and failed.
    pub(crate) fn of_code(code: ErrorCode) -> Self {
        match code {
            ErrorCode::InvalidParams
            | ErrorCode::PathRefused
            | ErrorCode::PreconditionFailed
            | ErrorCode::TooLarge
            | ErrorCode::Stale
            | ErrorCode::Conflict
            | ErrorCode::WriteGateClosed
            | ErrorCode::ToolDisabled
            | ErrorCode::ApprovalDenied => Self::Refused,
            ErrorCode::ResourceNotFound
            | ErrorCode::ParseError
            | ErrorCode::Io
            | ErrorCode::Timeout
            | ErrorCode::EditorError
            | ErrorCode::Internal => Self::Error,
        }
    }
}

/// One line of the trace.
#[derive(Debug)]
pub(crate) struct Line<'a> {
    pub tool: &'a str,
    pub duration: Duration,
    pub outcome: Outcome,
    pub error_code: Option<&'a str>,
    pub bytes_in: usize,
    pub bytes_out: usize,
}

#[derive(Serialize)]
struct Written<'a> {
    ts: f64,
    tool: &'a str,
    duration_ms: f64,
    outcome: Outcome,
    error_code: Option<&'a str>,
    bytes_in: usize,
    bytes_out: usize,
}

/// Milliseconds as a float rounded to three decimals (microseconds).
fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl Trace {
    /// Open (or create, `0600`) `path` for appending. An existing trace is kept and
    /// appended to; a missing folder or a path that is not a writable file is an error.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = godot_mcp_os::fs::create_mode(
            std::fs::OpenOptions::new().append(true).create(true),
            0o600,
        )
        .open(path)?;
        Ok(Self {
            file: Mutex::new(file),
            warned: AtomicBool::new(false),
        })
    }

    /// Append one line and flush it (one `write` of the whole line).
    pub(crate) fn record(&self, line: &Line<'_>) {
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| (d.as_millis() as f64) / 1e3);
        let written = Written {
            ts,
            tool: line.tool,
            duration_ms: millis(line.duration),
            outcome: line.outcome,
            error_code: line.error_code,
            bytes_in: line.bytes_in,
            bytes_out: line.bytes_out,
        };
        let mut bytes = serde_json::to_vec(&written).unwrap_or_default();
        bytes.push(b'\n');
        let mut file = self.file.lock();
        let r = file.write_all(&bytes).and_then(|()| file.flush());
        if let Err(e) = r
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(error = %e, "the call trace cannot be written; calls go on untraced");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_an_outcome_and_bad_input_is_refused() {
        assert_eq!(Outcome::of_code(ErrorCode::InvalidParams), Outcome::Refused);
        assert_eq!(Outcome::of_code(ErrorCode::PathRefused), Outcome::Refused);
        assert_eq!(
            Outcome::of_code(ErrorCode::ResourceNotFound),
            Outcome::Error
        );
        assert_eq!(Outcome::of_code(ErrorCode::EditorError), Outcome::Error);
    }

    #[test]
    fn a_duration_is_written_in_milliseconds_to_the_microsecond() {
        assert_eq!(millis(Duration::from_micros(4_211)), 4.211);
        assert_eq!(millis(Duration::from_nanos(1_999)), 0.002);
    }
}
