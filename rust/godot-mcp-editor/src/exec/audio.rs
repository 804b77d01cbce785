//! Audio executors: an audio player in the edited scene. Each edit is one
//! `EditorUndoRedoManager` action on the edited scene's history, validated before the
//! first change (so an error is `effect: unchanged`), and stamped with the same
//! persistence verdict as every node edit.

use godot::classes::{AudioServer, AudioStream};

use super::ctx::{
    Res, add_child_action, err, find, load_as, misrouted, new_node, rel_path, scene_root,
    with_verdict,
};
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_protocol::ErrorCode;
use godot_mcp_protocol::commands as wire;
use serde_json::json;

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::AudioAddPlayer(wire::AudioAddPlayer {
            parent,
            name,
            player_type,
            stream,
            bus,
            autoplay,
            volume_db,
        }) => add_audio_player(
            &parent,
            &name,
            &player_type,
            stream.as_deref(),
            bus.as_deref(),
            autoplay,
            volume_db,
        ),
        _ => Err(misrouted("audio")),
    }
}

fn add_audio_player(
    parent: &str,
    name: &str,
    player_type: &str,
    stream: Option<&str>,
    bus: Option<&str>,
    autoplay: bool,
    volume_db: Option<f64>,
) -> Res {
    let root = scene_root()?;
    let parent_node = find(&root, parent)?;
    let stream = stream
        .map(|s| load_as::<AudioStream>(s, "an AudioStream"))
        .transpose()?;
    // A player on a bus the editor's layout lacks plays on Master and saves no bus: refuse
    // rather than report a bus that will not be there.
    if let Some(b) = bus {
        let server = AudioServer::singleton();
        if server.get_bus_index(b) < 0 {
            let names: Vec<String> = (0..server.get_bus_count())
                .map(|i| server.get_bus_name(i).to_string())
                .collect();
            return Err(err(
                ErrorCode::InvalidParams,
                format!(
                    "the editor's audio bus layout has no bus {b:?} (buses: {})",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut child = new_node(player_type, name)?;
    // Properties go on the new node before the action: undo removes the node, redo adds
    // it back as it was.
    if let Some(s) = &stream {
        child.set("stream", &s.to_variant());
    }
    if let Some(b) = bus {
        child.set("bus", &StringName::from(b).to_variant());
    }
    if autoplay {
        child.set("autoplay", &true.to_variant());
    }
    if let Some(v) = volume_db {
        child.set("volume_db", &(v as f32).to_variant());
    }
    add_child_action(
        &root,
        &parent_node,
        &child,
        &format!("MCP: add {player_type} {name}"),
    )?;
    Ok(with_verdict(
        &root,
        &child,
        json!({
            "node": rel_path(&root, &child), "type": player_type,
            "stream": stream.map(|s| s.get_path().to_string()),
            "bus": child.get("bus").to_string(),
            "autoplay": child.get("autoplay").to::<bool>(),
            "volume_db": child.get("volume_db").to::<f64>(),
        }),
    ))
}
