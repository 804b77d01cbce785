//! The JSON frames of the bridge.
//!
//! The add-on connects and sends [`Hello`]; the server answers [`HelloReply`]; from then on
//! the server sends [`Request`]s and the add-on answers each with exactly one [`Reply`]
//! carrying the same [`RequestId`]. Frames are tagged by `"type"` ([`AddonMessage`],
//! [`ServerMessage`]) so either side decodes any frame with one call.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::status::ServerStatus;
use crate::version::{DEFAULT_REQUEST_TIMEOUT_MS, GodotVersion};

/// Identifies a request within one connection; the server allocates them, never reusing one,
/// so a late reply can never be mistaken for the answer to a newer request.
pub type RequestId = u64;

/// First frame on a connection, from the add-on: who it is and the token that proves it
/// read the discovery file.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// [`crate::BRIDGE_PROTOCOL_VERSION`] as compiled into the add-on.
    pub protocol_version: u32,
    /// The add-on crate version, so the server can report an add-on/server mismatch.
    pub addon_version: String,
    /// The running editor's engine version, checked as the `godot_version` precondition.
    pub godot_version: GodotVersion,
    /// The random token from the discovery file; the server refuses any other.
    pub token: String,
}

/// Keeps the token out of logs.
impl fmt::Debug for Hello {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hello")
            .field("protocol_version", &self.protocol_version)
            .field("addon_version", &self.addon_version)
            .field("godot_version", &self.godot_version)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// The server's answer to [`Hello`]. After `Rejected` the server closes the connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum HelloReply {
    Accepted {
        /// The protocol version the server speaks (equal to the add-on's, or it would reject).
        protocol_version: u32,
        /// The `godot-mcp` server version, for the add-on's log line.
        server_version: String,
    },
    Rejected {
        error: BridgeError,
    },
}

/// One command for the editor to execute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: RequestId,
    /// The command name; one the add-on does not know is answered with
    /// [`ErrorCode::UnknownCommand`], never dropped.
    pub cmd: String,
    /// Command arguments; their shape belongs to the command.
    #[serde(default)]
    pub params: Value,
    /// How long the server waits for the reply. The add-on uses it to skip requests that
    /// waited in its queue longer than the server will wait for them.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_REQUEST_TIMEOUT_MS
}

/// The add-on's answer to the [`Request`] with the same `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub id: RequestId,
    /// On the wire either `"ok": <result>` or `"error": {code, message}`, beside `id`.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Reply {
    pub fn ok(id: RequestId, result: Value) -> Self {
        Reply {
            id,
            outcome: Outcome::Ok(result),
        }
    }

    /// An error reply that says nothing about what it left in the editor (see
    /// [`BridgeError::effect`]): the server treats it as unproven.
    pub fn error(id: RequestId, code: ErrorCode, message: impl Into<String>) -> Self {
        Reply {
            id,
            outcome: Outcome::Error(BridgeError::new(code, message)),
        }
    }
}

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The command ran; its result, shaped by the command.
    Ok(Value),
    /// The command did not run, or failed; see the code.
    Error(BridgeError),
}

/// A structured error on the bridge: a stable code for programs, a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeError {
    pub code: ErrorCode,
    pub message: String,
    /// What the failed command left in the editor, as the add-on reports it on an error
    /// reply to a request. Absent means unknown (an old add-on, a hello rejection, a
    /// panic mid-command): the server then treats the editor as possibly changed and
    /// never tells an agent that nothing changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<ErrorEffect>,
}

impl BridgeError {
    /// An error that says nothing about what it left in the editor.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            effect: None,
        }
    }

    /// The same error, stating what it left in the editor.
    pub fn with_effect(mut self, effect: ErrorEffect) -> Self {
        self.effect = Some(effect);
        self
    }
}

/// What a command that answered an error left in the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorEffect {
    /// Refused before anything changed (decoding or validation failed, or it never ran).
    Unchanged,
    /// A change was made and then undone: its undo action ran and the value read back
    /// equals the value before (e.g. `resource.set_property` whose save failed).
    RolledBack,
    /// A change was made and is still in the editor (its undo was refused or did not
    /// restore the value read back).
    Changed,
}

/// Stable error codes. New codes may appear; an old peer decodes them as `Unrecognized`
/// rather than failing to read the whole frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Hello: the two sides speak different protocol versions.
    ProtocolMismatch,
    /// Hello: the token is missing or wrong.
    Unauthorized,
    /// Hello: the editor's Godot is older than [`crate::MIN_GODOT_VERSION`].
    UnsupportedGodotVersion,
    /// The add-on's executor switch is off (the plugin is disabled in Project Settings).
    ExecutorDisabled,
    /// The add-on does not know `cmd`.
    UnknownCommand,
    /// `params` do not fit the command.
    InvalidParams,
    /// The request waited longer than its `timeout_ms` before it could run.
    Timeout,
    /// No scene is open in the editor.
    NoActiveScene,
    /// The request names a scene (or a scene root) other than the one being edited:
    /// refused, nothing done.
    SceneMismatch,
    /// A node, scene or resource named by the request does not exist.
    NotFound,
    /// The command ran and Godot refused it (a bad type name, a property that does not
    /// exist, a save that failed…); [`BridgeError::effect`] says what it left.
    Failed,
    /// A bug in the add-on; the message says what was logged.
    Internal,
    /// A code this build does not know (sent by a newer peer).
    #[serde(other)]
    Unrecognized,
}

/// Every frame the add-on sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AddonMessage {
    Hello(Hello),
    Reply(Reply),
}

/// Every frame the server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    HelloReply(HelloReply),
    Request(Request),
    /// The server's gate and journal, for the dock: sent after the hello and whenever
    /// they change. Needs no reply.
    Status(ServerStatus),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::BRIDGE_PROTOCOL_VERSION;

    fn godot_441() -> GodotVersion {
        "4.4.1.stable.official".parse().unwrap()
    }

    /// Serializes `message`, checks it is exactly `wire`, and decodes `wire` back to `message`.
    fn assert_wire<T>(message: T, wire: Value)
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        assert_eq!(serde_json::to_value(&message).unwrap(), wire);
        let text = serde_json::to_string(&wire).unwrap();
        assert_eq!(serde_json::from_str::<T>(&text).unwrap(), message);
    }

    #[test]
    fn hello_on_the_wire() {
        assert_wire(
            AddonMessage::Hello(Hello {
                protocol_version: BRIDGE_PROTOCOL_VERSION,
                addon_version: "0.1.0".into(),
                godot_version: godot_441(),
                token: "s3cret".into(),
            }),
            json!({
                "type": "hello",
                "protocol_version": 1,
                "addon_version": "0.1.0",
                "godot_version": {
                    "major": 4, "minor": 4, "patch": 1,
                    "status": "stable", "build": "official"
                },
                "token": "s3cret"
            }),
        );
    }

    #[test]
    fn hello_debug_hides_the_token() {
        let hello = Hello {
            protocol_version: 1,
            addon_version: "0.1.0".into(),
            godot_version: godot_441(),
            token: "s3cret".into(),
        };
        let shown = format!("{hello:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn hello_replies_on_the_wire() {
        assert_wire(
            ServerMessage::HelloReply(HelloReply::Accepted {
                protocol_version: 1,
                server_version: "0.1.0".into(),
            }),
            json!({
                "type": "hello_reply", "status": "accepted",
                "protocol_version": 1, "server_version": "0.1.0"
            }),
        );
        assert_wire(
            ServerMessage::HelloReply(HelloReply::Rejected {
                error: BridgeError::new(ErrorCode::Unauthorized, "bad token"),
            }),
            json!({
                "type": "hello_reply", "status": "rejected",
                "error": {"code": "unauthorized", "message": "bad token"}
            }),
        );
    }

    #[test]
    fn request_on_the_wire() {
        assert_wire(
            ServerMessage::Request(Request {
                id: 7,
                cmd: "node.set_property".into(),
                params: json!({"path": "Player", "property": "visible", "value": false}),
                timeout_ms: 2500,
            }),
            json!({
                "type": "request", "id": 7, "cmd": "node.set_property",
                "params": {"path": "Player", "property": "visible", "value": false},
                "timeout_ms": 2500
            }),
        );
    }

    #[test]
    fn request_defaults_params_and_timeout() {
        let decoded: ServerMessage =
            serde_json::from_value(json!({"type": "request", "id": 1, "cmd": "ping"})).unwrap();
        assert_eq!(
            decoded,
            ServerMessage::Request(Request {
                id: 1,
                cmd: "ping".into(),
                params: Value::Null,
                timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            })
        );
    }

    #[test]
    fn status_on_the_wire() {
        use crate::status::{GateState, QuarantinedRow, RecentAction};
        assert_wire(
            ServerMessage::Status(ServerStatus {
                server_version: "0.1.0".into(),
                project_root: "/p".into(),
                write_gate: GateState::Closed {
                    quarantined: vec![QuarantinedRow {
                        transaction_id: "t1".into(),
                        reason: "unprovable".into(),
                    }],
                },
                recent: vec![RecentAction {
                    transaction_id: "t1".into(),
                    tool: "write_script".into(),
                    class: "mutating".into(),
                    status: "quarantined".into(),
                    undoable: None,
                    files: Vec::new(),
                }],
            }),
            json!({
                "type": "status", "server_version": "0.1.0", "project_root": "/p",
                "write_gate": {"status": "closed", "quarantined": [
                    {"transaction_id": "t1", "reason": "unprovable"}
                ]},
                "recent": [{
                    "transaction_id": "t1", "tool": "write_script", "class": "mutating",
                    "status": "quarantined"
                }]
            }),
        );
        assert_wire(
            ServerMessage::Status(ServerStatus {
                server_version: "0.1.0".into(),
                project_root: "/p".into(),
                write_gate: GateState::Open,
                recent: vec![],
            }),
            json!({
                "type": "status", "server_version": "0.1.0", "project_root": "/p",
                "write_gate": {"status": "open"}, "recent": []
            }),
        );
    }

    #[test]
    fn replies_on_the_wire() {
        assert_wire(
            AddonMessage::Reply(Reply::ok(7, json!({"undoable": true}))),
            json!({"type": "reply", "id": 7, "ok": {"undoable": true}}),
        );
        assert_wire(
            AddonMessage::Reply(Reply::ok(8, Value::Null)),
            json!({"type": "reply", "id": 8, "ok": null}),
        );
        assert_wire(
            AddonMessage::Reply(Reply::error(9, ErrorCode::ExecutorDisabled, "plugin off")),
            json!({
                "type": "reply", "id": 9,
                "error": {"code": "executor_disabled", "message": "plugin off"}
            }),
        );
    }

    #[test]
    fn an_error_states_what_it_left_in_the_editor() {
        assert_wire(
            AddonMessage::Reply(Reply {
                id: 4,
                outcome: Outcome::Error(
                    BridgeError::new(ErrorCode::Failed, "saving failed")
                        .with_effect(ErrorEffect::RolledBack),
                ),
            }),
            json!({
                "type": "reply", "id": 4,
                "error": {"code": "failed", "message": "saving failed", "effect": "rolled_back"}
            }),
        );
        // An old add-on's error (no `effect`) still decodes, as unknown.
        let old: AddonMessage = serde_json::from_value(json!({
            "type": "reply", "id": 5, "error": {"code": "failed", "message": "?"}
        }))
        .unwrap();
        assert_eq!(
            old,
            AddonMessage::Reply(Reply::error(5, ErrorCode::Failed, "?"))
        );
    }

    #[test]
    fn unknown_error_code_decodes_as_unrecognized() {
        let decoded: AddonMessage = serde_json::from_value(json!({
            "type": "reply", "id": 3,
            "error": {"code": "from_the_future", "message": "?"}
        }))
        .unwrap();
        assert_eq!(
            decoded,
            AddonMessage::Reply(Reply::error(3, ErrorCode::Unrecognized, "?"))
        );
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let frames = [
            json!({"type": "reply", "id": 1}),
            json!({"type": "reply", "ok": 1}),
            json!({"type": "launch_missiles"}),
            json!({"id": 1, "ok": 1}),
            json!({"type": "hello", "protocol_version": 1}),
        ];
        for frame in frames {
            assert!(
                serde_json::from_value::<AddonMessage>(frame.clone()).is_err(),
                "{frame}"
            );
        }
    }
}
