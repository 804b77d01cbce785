//! The editor's godot_mcp add-on as the stand-in plays it (`-e`/`--editor`).

use std::io::Write;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The editor's godot_mcp add-on, in an editor with no scene open: finds the server in
/// the project's discovery file once the editor has "loaded", says hello with the
/// token, and answers each request as the add-on does (no scene: `no_active_scene`).
pub(crate) async fn editor_addon(root: String) {
    use godot_mcp_protocol::{
        AddonMessage, BRIDGE_PROTOCOL_VERSION, BridgeError, DISCOVERY_RELATIVE_PATH, Discovery,
        ErrorCode, Hello, Outcome, Reply, ServerMessage,
    };
    let load_ms: u64 = std::env::var("GODOT_STANDIN_EDITOR_LOAD_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(load_ms)).await;
    let path = std::path::Path::new(&root).join(DISCOVERY_RELATIVE_PATH);
    let Some(d) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Discovery>(&t).ok())
    else {
        eprintln!("godot_mcp: no server found in {}", path.display());
        return;
    };
    let Ok(stream) = tokio::net::TcpStream::connect(&d.endpoint).await else {
        eprintln!("godot_mcp: cannot connect to {}", d.endpoint);
        return;
    };
    let (rd, mut wr) = stream.into_split();
    let hello = AddonMessage::Hello(Hello {
        protocol_version: BRIDGE_PROTOCOL_VERSION,
        addon_version: "standin".into(),
        godot_version: "4.4.1.stable.standin".parse().expect("a Godot version"),
        token: d.token.clone(),
    });
    let line = serde_json::to_string(&hello).unwrap_or_default() + "\n";
    if wr.write_all(line.as_bytes()).await.is_err() {
        return;
    }
    println!("godot_mcp: connected to the server at {}", d.endpoint);
    let _ = std::io::stdout().flush();
    let mut lines = BufReader::new(rd).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(ServerMessage::Request(r)) = serde_json::from_str(&line) else {
            continue;
        };
        let error = match r.cmd.as_str() {
            "editor.history" | "editor.undo" | "editor.redo" | "scene.tree" => {
                BridgeError::new(ErrorCode::NoActiveScene, "no scene is open in the editor")
            }
            other => BridgeError::new(
                ErrorCode::UnknownCommand,
                format!("the stand-in editor does not know {other}"),
            ),
        };
        let reply = AddonMessage::Reply(Reply {
            id: r.id,
            outcome: Outcome::Error(error),
        });
        let line = serde_json::to_string(&reply).unwrap_or_default() + "\n";
        if wr.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
}
