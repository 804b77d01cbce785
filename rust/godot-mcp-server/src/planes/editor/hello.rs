//! The add-on's hello: the token the discovery file publishes, and the checks a hello
//! must pass before its connection is accepted ([`Peer`]) or refused ([`Rejection`]).

use std::io::{self, Write};
use std::path::Path;

use godot_mcp_protocol::{
    AddonMessage, BRIDGE_PROTOCOL_VERSION, Discovery, ErrorCode, GodotVersion, Hello,
};

/// Who is connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub godot_version: GodotVersion,
    pub addon_version: String,
}

/// Why the last hello was refused; reported by preconditions while nobody is connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Unauthorized,
    Http,
    ProtocolMismatch { addon: u32, addon_version: String },
    UnsupportedGodot(GodotVersion),
    Malformed,
}

pub(super) fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// Data-independent comparison (the length is not secret: every token is 64 hex
/// digits), so the token does not leak by timing.
fn token_matches(given: &str, expected: &str) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// Write the discovery file atomically with mode 0600.
///
/// Atomic (a temporary file renamed over it), not durable: no `fsync`. The file
/// describes this process's listener (a fresh port and token at every start, so its
/// bytes never repeat) and means nothing once the process is gone; only a power loss
/// could tear it, after which no server listens anyway and the add-on reads a torn or
/// empty file as no server (`read_discovery`: not JSON is `None`). Another process
/// never sees a torn file: a rename replaces the name in one step. It was the only
/// `fsync` of a warm start.
pub(super) fn write_discovery(path: &Path, d: &Discovery) -> io::Result<()> {
    let dir = path.parent().ok_or_else(|| io::Error::other("no parent"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".bridge.json.{}.tmp", std::process::id()));
    let mut f = godot_mcp_os::fs::create_mode(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
        0o600,
    )
    .open(&tmp)?;
    f.write_all(
        serde_json::to_string_pretty(d)
            .map_err(io::Error::other)?
            .as_bytes(),
    )?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// The add-on's first frame checked: a hello with the token, speaking this server's
/// bridge protocol, from a supported Godot; or why it is refused (what preconditions
/// report, and the error the add-on is told).
pub(super) fn check_hello(
    first: Option<AddonMessage>,
    token: &str,
) -> Result<Hello, (Rejection, ErrorCode, String)> {
    let Some(AddonMessage::Hello(hello)) = first else {
        return Err((
            Rejection::Malformed,
            ErrorCode::Unauthorized,
            "the first frame must be a hello with the token".into(),
        ));
    };
    if !token_matches(&hello.token, token) {
        return Err((
            Rejection::Unauthorized,
            ErrorCode::Unauthorized,
            "wrong or missing token".into(),
        ));
    }
    if hello.protocol_version != BRIDGE_PROTOCOL_VERSION {
        return Err((
            Rejection::ProtocolMismatch {
                addon: hello.protocol_version,
                addon_version: hello.addon_version.clone(),
            },
            ErrorCode::ProtocolMismatch,
            format!(
                "the add-on speaks bridge protocol {}, this server {BRIDGE_PROTOCOL_VERSION}",
                hello.protocol_version
            ),
        ));
    }
    if !hello.godot_version.is_supported() {
        return Err((
            Rejection::UnsupportedGodot(hello.godot_version.clone()),
            ErrorCode::UnsupportedGodotVersion,
            format!(
                "Godot {} is not supported (4.4 or newer 4.x)",
                hello.godot_version
            ),
        ));
    }
    Ok(hello)
}
