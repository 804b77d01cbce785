//! A bridge request decoded ONCE into the protocol's [`c::Request`] (serde, by the
//! command table), then each command's checks (what serde cannot check: `res://` paths,
//! node names, ranges, `$N` step references) in one exhaustive match, into the
//! [`Command`] the add-on's executors take. Anything else is answered with a structured
//! error (`unknown_command`, `invalid_params`, `effect: unchanged`), never dropped and
//! never a panic. A new command that is not matched here does not compile.

use godot_mcp_protocol::BridgeError;
use godot_mcp_protocol::commands as c;
use serde_json::Value as Json;

use crate::authoring as au;
use crate::check::{invalid, res_path};
use crate::command::{
    AUDIO_PLAYER_TYPES, Command, MIN_MAX_EDGE, OnScene, ScreenshotView, checked, name_ok,
    opt_name_ok, opt_res_path, page_ok, steps,
};

/// Decode a request's command and parameters: once, into the protocol's
/// [`c::Request`], then each command's checks (what serde cannot check), in one match.
pub fn decode(cmd: &str, p: &Json) -> Result<Command, BridgeError> {
    use c::Request as R;
    Ok(match c::Request::decode(cmd, p)? {
        R::Ping(_) => Command::Ping,
        R::EditorState(_) => Command::EditorState,
        R::SceneTree(a) => Command::SceneTree(checked(a, |a| page_ok(a.limit))?),
        R::SceneOpen(a) => Command::SceneOpen(checked(a, |a| res_path(&a.path))?),
        R::SceneCreate(a) => Command::SceneCreate(checked(a, |a| {
            res_path(&a.path)?;
            if !a.path.ends_with(".tscn") {
                return Err(invalid("a new scene's path must end in .tscn"));
            }
            opt_name_ok(&a.root_name)
        })?),
        R::SceneSave(a) => Command::SceneSave(checked(a, |a| opt_res_path(&a.path))?),
        R::SceneClose(a) => Command::SceneClose(checked(a, |a| opt_res_path(&a.path))?),
        R::SceneReload(a) => Command::SceneReload(checked(a, |a| opt_res_path(&a.path))?),
        R::NodeCreate(a) => Command::NodeCreate(checked(a, |a| name_ok(&a.name))?),
        R::NodeRename(a) => Command::NodeRename(checked(a, |a| name_ok(&a.new_name))?),
        R::NodeMove(a) => Command::NodeMove(a),
        R::NodeDuplicate(a) => Command::NodeDuplicate(checked(a, |a| opt_name_ok(&a.new_name))?),
        R::NodeDelete(a) => Command::NodeDelete(a),
        R::NodeGetProperty(a) => Command::NodeGetProperty(a),
        R::NodeSetProperty(a) => Command::NodeSetProperty(a.0),
        R::NodePersistence(a) => Command::NodePersistence(a),
        R::ScriptAttach(a) => Command::ScriptAttach(checked(a, |a| res_path(&a.script))?),
        R::ScriptDetach(a) => Command::ScriptDetach(a),
        R::SignalConnect(a) => Command::SignalConnect(a.0),
        R::SignalDisconnect(a) => Command::SignalDisconnect(a.0),
        R::ResourceSetProperty(a) => {
            Command::ResourceSetProperty(checked(a, |a| res_path(&a.path))?)
        }
        R::BatchApply(a) => Command::BatchApply(checked(a, |a| {
            if a.sets.is_empty() {
                return Err(invalid("a batch needs at least one set"));
            }
            Ok(())
        })?),
        R::Steps(a) => steps(a)?,
        R::Cells(a) => Command::Cells(checked(a, |a| page_ok(a.limit))?),
        R::MeshLibraryItems(a) => Command::MeshLibraryItems(checked(a, |a| res_path(&a.path))?),
        R::Undo(a) => Command::Undo {
            action: a.action,
            on: OnScene::decode(a.scene, a.root_id)?,
        },
        R::Redo(_) => Command::Redo,
        R::History(a) => Command::History(OnScene::decode(a.scene, None)?),
        R::EditorScreenshot(a) => Command::EditorScreenshot(checked(a, |a| {
            if a.max_edge.is_some_and(|m| m < MIN_MAX_EDGE) {
                return Err(invalid(format!("max_edge must be at least {MIN_MAX_EDGE}")));
            }
            if a.node.is_some() && a.view != ScreenshotView::TwoD {
                return Err(invalid("node crops the 2d view only"));
            }
            Ok(())
        })?),
        R::EditorMonitors(_) => Command::EditorMonitors,
        R::FilesystemScan(_) => Command::FilesystemScan,
        R::FilesystemStatus(_) => Command::FilesystemStatus,
        R::FilesystemUpdate(a) => Command::FilesystemUpdate(checked(a, |a| {
            a.paths.iter().try_for_each(|p| res_path(p))
        })?),
        R::AudioAddPlayer(a) => Command::AudioAddPlayer(checked(a, |a| {
            name_ok(&a.name)?;
            if !AUDIO_PLAYER_TYPES.contains(&a.player_type.as_str()) {
                return Err(invalid(format!(
                    "type must be one of {}",
                    AUDIO_PLAYER_TYPES.join(", ")
                )));
            }
            opt_res_path(&a.stream)?;
            if a.volume_db.is_some_and(|v| !v.is_finite()) {
                return Err(invalid("volume_db must be a finite number"));
            }
            Ok(())
        })?),
        R::ShaderAssignMaterial(a) => {
            Command::ShaderAssignMaterial(checked(a, |a| res_path(&a.shader))?)
        }
        R::ShaderUniforms(a) => Command::ShaderUniforms(a),
        R::ShaderSetUniform(a) => Command::ShaderSetUniform(checked(a, |a| {
            if a.name.is_empty() {
                return Err(invalid("name is empty"));
            }
            Ok(())
        })?),
        R::NodeInstance(a) => au::node_instance(a)?,
        R::NodeGroup(a) => au::node_group(a)?,
        R::NodeEditableChildren(a) => au::node_editable_children(a)?,
        R::EditorSelect(a) => Command::Select { nodes: a.nodes },
        R::EditorSelection(_) => Command::Selection,
        R::SceneSaveAll(_) => Command::SaveAll,
        R::NodeConnections(a) => Command::Connections { node: a.node },
        R::NodeProperties(a) => au::node_properties(a)?,
        R::AnimationAdd(a) => au::animation_add(a)?,
        R::AnimationRemove(a) => au::animation_remove(a)?,
        R::AnimationTrackAdd(a) => au::animation_track_add(a)?,
        R::AnimationTrackRemove(a) => au::animation_track_remove(a)?,
        R::AnimationKeyInsert(a) => au::animation_key_insert(a)?,
        R::AnimationKeyRemove(a) => au::animation_key_remove(a)?,
        R::AnimationGet(a) => au::animation_get(a)?,
        R::AnimationSet(a) => au::animation_set(a)?,
        R::AnimationTreeAddNode(a) => au::animation_tree_add_node(a)?,
        R::AnimationTreeConnect(a) => au::animation_tree_connect(a)?,
        R::AnimationTreeBlendConnect(a) => au::animation_tree_blend_connect(a)?,
        R::ThemeSetItem(a) => au::theme_set_item(a)?,
        R::ControlThemeOverride(a) => au::control_theme_override(a)?,
        R::ControlAnchorsPreset(a) => au::control_anchors_preset(a)?,
        R::ControlAddContainer(a) => au::control_add_container(a)?,
    })
}
