//! Table tests of the policy, against synthetic tools of every class whose effects
//! are counted, so "changes nothing" is observed rather than assumed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::approval::*;
use super::pipeline::call_detached as call;
use super::*;
use crate::error::{ErrorCode, ToolError};
use crate::project_root::Project;
use crate::rules::class::{Destructive, Mutating, OneStep, Plans, ReadOnly, Runtime};
use crate::rules::*;
use crate::state::AppState;
use crate::tools::{Call, Plan, Registry, ToolDef, ToolMeta};

#[test]
fn only_destructive_requires_confirm() {
    for c in SafetyClass::ALL {
        assert_eq!(c.requires_confirm(), c == SafetyClass::Destructive);
    }
    assert!(SafetyClass::Mutating.takes_dry_run());
    assert!(!SafetyClass::ReadOnly.takes_dry_run());
    assert!(!SafetyClass::Runtime.takes_dry_run());
}

#[test]
fn annotations_follow_class() {
    // As a client reads them: an absent hint is the protocol's default (readOnlyHint
    // false, destructiveHint true, idempotentHint false, openWorldHint true).
    let read = |c: SafetyClass| {
        let a = c.annotations("t");
        (
            a.read_only_hint.unwrap_or(false),
            a.destructive_hint.unwrap_or(true),
            a.idempotent_hint.unwrap_or(false),
            a.open_world_hint.unwrap_or(true),
        )
    };
    assert!(read(SafetyClass::ReadOnly).0);
    assert_eq!(read(SafetyClass::Destructive), (false, true, false, false));
    assert_eq!(read(SafetyClass::Mutating), (false, false, false, false));
    assert_eq!(read(SafetyClass::Runtime), (false, false, false, false));
}

/// The class of every built-in tool, written out. Changing a tool's class, adding or
/// removing a tool must change this table in the same commit.
#[test]
fn every_tool_has_its_pinned_class() {
    use SafetyClass::*;
    let expected: &[(&str, SafetyClass)] = &[
        ("abandon_change", Mutating),
        ("add_animation", Mutating),
        ("add_animation_track", Mutating),
        ("add_audio_bus", Destructive),
        ("add_audio_bus_effect", Destructive),
        ("add_audio_player", Mutating),
        ("add_blend_tree_node", Mutating),
        ("add_camera_3d", Mutating),
        ("add_collision_shape", Mutating),
        ("add_container", Mutating),
        ("add_input_action", Destructive),
        ("add_input_event", Destructive),
        ("add_light_3d", Mutating),
        ("add_mesh_instance", Mutating),
        ("add_navigation_agent", Mutating),
        ("add_navigation_region", Mutating),
        ("add_particles", Mutating),
        ("add_physics_body", Mutating),
        ("add_raycast", Mutating),
        ("add_state_machine_state", Mutating),
        ("add_tileset_atlas_source", Mutating),
        ("add_to_group", Mutating),
        ("add_visual_shader_node", Destructive),
        ("apply_particles_preset", Mutating),
        ("apply_scene_batch", Mutating),
        ("assert_node_state", ReadOnly),
        ("assign_shader_material", Mutating),
        ("attach_script", Mutating),
        ("bake_navigation_mesh", Mutating),
        ("begin_change", Mutating),
        ("build_csharp", Runtime),
        ("canonicalize_resource", Destructive),
        ("capture_editor_screenshot", ReadOnly),
        ("check_scene_integrity", ReadOnly),
        ("clear_breakpoints", Runtime),
        ("clear_gridmap_cells", Destructive),
        ("clear_input_action_events", Destructive),
        ("clear_tile_cells", Destructive),
        ("close_scene", Destructive),
        ("commit_change", Mutating),
        ("compare_screenshots", ReadOnly),
        ("connect_blend_tree_nodes", Mutating),
        ("connect_signal", Mutating),
        ("connect_state_machine_states", Mutating),
        ("connect_visual_shader_nodes", Destructive),
        ("continue_execution", Runtime),
        ("create_folder", Destructive),
        ("create_material", Destructive),
        ("create_node", Mutating),
        ("create_nodes", Mutating),
        ("create_project_scaffold", Destructive),
        ("create_resource", Destructive),
        ("create_scene", Destructive),
        ("create_script", Destructive),
        ("create_shader", Destructive),
        ("create_visual_shader", Destructive),
        ("cross_scene_set_property", Destructive),
        ("debug_break", Runtime),
        ("delete_folder", Destructive),
        ("delete_node", Destructive),
        ("delete_resource_file", Destructive),
        ("dependency_graph", ReadOnly),
        ("detach_script", Destructive),
        ("disconnect_signal", Destructive),
        ("disconnect_visual_shader_nodes", Destructive),
        ("duplicate_file", Destructive),
        ("duplicate_node", Mutating),
        ("edit_shader", Destructive),
        ("editor_history", ReadOnly),
        ("editor_redo", Mutating),
        ("editor_undo", Mutating),
        ("evaluate_expression", Runtime),
        ("evaluate_in_frame", Runtime),
        ("export_info", ReadOnly),
        ("export_project", Runtime),
        ("export_status", ReadOnly),
        ("fill_tile_rect", Mutating),
        ("find_circular_dependencies", ReadOnly),
        ("find_nodes_by_type", ReadOnly),
        ("find_references", ReadOnly),
        ("find_ui_elements", Runtime),
        ("find_unused_resources", ReadOnly),
        ("game_pause", Runtime),
        ("game_resume", Runtime),
        ("game_run_until", Runtime),
        ("game_screenshot", Runtime),
        ("game_step", Runtime),
        ("get_animation", ReadOnly),
        ("get_audio_bus_layout", ReadOnly),
        ("get_class_reference", ReadOnly),
        ("get_editor_animation", ReadOnly),
        ("get_editor_node_properties", ReadOnly),
        ("get_editor_property_list", ReadOnly),
        ("get_frame_variables", Runtime),
        ("get_game_property", Runtime),
        ("get_game_scene_tree", Runtime),
        ("get_gridmap_cells", ReadOnly),
        ("get_import_status", ReadOnly),
        ("get_input_action", ReadOnly),
        ("get_layer_names", ReadOnly),
        ("get_node_properties", ReadOnly),
        ("get_node_property", ReadOnly),
        ("get_node_script", ReadOnly),
        ("get_parse_errors", ReadOnly),
        ("get_performance_monitors", Runtime),
        ("get_resource_properties", ReadOnly),
        ("get_scene_tree", ReadOnly),
        ("get_selected_nodes", ReadOnly),
        ("get_shader_uniforms", ReadOnly),
        ("get_stack_frames", Runtime),
        ("get_theme", ReadOnly),
        ("get_tilemap_cells", ReadOnly),
        ("get_tileset", ReadOnly),
        ("get_used_tile_cells", ReadOnly),
        ("get_visual_shader_graph", ReadOnly),
        ("import_asset", Destructive),
        ("insert_animation_key", Mutating),
        ("instance_scene", Mutating),
        ("is_playing", Runtime),
        ("list_animations", ReadOnly),
        ("list_editor_signal_connections", ReadOnly),
        ("list_export_presets", ReadOnly),
        ("list_files", ReadOnly),
        ("list_mesh_library_items", ReadOnly),
        ("list_node_groups", ReadOnly),
        ("list_open_scenes", ReadOnly),
        ("list_resources_by_type", ReadOnly),
        ("list_scripts", ReadOnly),
        ("list_sessions", ReadOnly),
        ("list_signal_connections", ReadOnly),
        ("list_toolsets", ReadOnly),
        ("list_transactions", ReadOnly),
        ("manage_toolsets", Mutating),
        ("monitor_property", Runtime),
        ("move_file", Destructive),
        ("move_node", Mutating),
        ("open_scene", Mutating),
        ("patch_script", Destructive),
        ("play_input_sequence", Runtime),
        ("play_scene", Runtime),
        ("profile_game_functions", Runtime),
        ("project_info", ReadOnly),
        ("project_stats", ReadOnly),
        ("read_resource", ReadOnly),
        ("record_input", Runtime),
        ("register_autoload", Destructive),
        ("reload_scene", Destructive),
        ("remove_animation", Destructive),
        ("remove_animation_key", Destructive),
        ("remove_animation_track", Destructive),
        ("remove_audio_bus", Destructive),
        ("remove_audio_bus_effect", Destructive),
        ("remove_breakpoint", Runtime),
        ("remove_from_group", Destructive),
        ("remove_input_action", Destructive),
        ("remove_visual_shader_node", Destructive),
        ("rename_node", Mutating),
        ("rescan_filesystem", Runtime),
        ("resolve_uid", ReadOnly),
        ("run_and_capture", Runtime),
        ("run_commands", Mutating),
        ("run_playtest", Runtime),
        ("run_tests", Runtime),
        ("sample_game_property", Runtime),
        ("save_all_scenes", Destructive),
        ("save_scene", Destructive),
        ("save_screenshot", Destructive),
        ("scripts_read", ReadOnly),
        ("search_class_reference", ReadOnly),
        ("search_files", ReadOnly),
        ("select_nodes", ReadOnly),
        ("set_anchors_preset", Mutating),
        ("set_animation", Mutating),
        ("set_audio_bus", Destructive),
        ("set_breakpoint", Runtime),
        ("set_collision_layers", Mutating),
        ("set_editable_children", Destructive),
        ("set_environment", Mutating),
        ("set_gridmap_cells", Mutating),
        ("set_layer_names", Destructive),
        ("set_navigation_layers", Mutating),
        ("set_node_property", Mutating),
        ("set_particles_color_ramp", Mutating),
        ("set_resource_property", Mutating),
        ("set_setting", Destructive),
        ("set_shader_uniform", Mutating),
        ("set_theme_item", Mutating),
        ("set_theme_override", Mutating),
        ("set_tile_cells", Mutating),
        ("set_tile_collision", Mutating),
        ("set_tileset_physics_layer", Mutating),
        ("set_tileset_terrain_set", Mutating),
        ("set_visual_shader_node_property", Destructive),
        ("shader_validate", ReadOnly),
        ("signal_flow", ReadOnly),
        ("simulate_input", Runtime),
        ("start_editor", Runtime),
        ("step_into", Runtime),
        ("step_out", Runtime),
        ("step_over", Runtime),
        ("stop_editor", Runtime),
        ("stop_recording", Runtime),
        ("stop_scene", Runtime),
        ("unregister_autoload", Destructive),
        ("write_script", Destructive),
    ];
    let mut actual: Vec<(&str, SafetyClass)> = Registry::builtin()
        .iter()
        .map(|d| (d.meta.name, d.meta.class))
        .collect();
    actual.sort();
    assert_eq!(actual, expected);
}

#[test]
fn gate_routing_follows_class_and_runtime_flags() {
    let none = RuntimeFlags::default();
    assert!(!is_gated(SafetyClass::ReadOnly, none));
    assert!(is_gated(SafetyClass::Mutating, none));
    assert!(is_gated(SafetyClass::Destructive, none));
    assert!(!is_gated(SafetyClass::Runtime, none));
    assert!(is_gated(
        SafetyClass::Runtime,
        RuntimeFlags {
            writes_disk: true,
            executes_code: false
        }
    ));
    assert!(is_gated(
        SafetyClass::Runtime,
        RuntimeFlags {
            writes_disk: false,
            executes_code: true
        }
    ));
}

#[test]
fn preconditions_carry_tokens_and_hints() {
    let table = [
        (
            Precondition::BridgeConnected,
            ErrorCode::PreconditionFailed,
            Some("bridge_connected"),
        ),
        (
            Precondition::ActiveScene,
            ErrorCode::PreconditionFailed,
            Some("active_scene"),
        ),
        (
            Precondition::NodeExists {
                path: "Player/Gun".into(),
            },
            ErrorCode::ResourceNotFound,
            None,
        ),
        (
            Precondition::GodotBinary,
            ErrorCode::PreconditionFailed,
            Some("godot_binary"),
        ),
        (
            Precondition::GodotVersion {
                required: "4.4".into(),
                found: Some("4.2".into()),
            },
            ErrorCode::PreconditionFailed,
            Some("godot_version"),
        ),
        (
            Precondition::GameNotBreaked,
            ErrorCode::PreconditionFailed,
            Some("game_not_breaked"),
        ),
    ];
    for (p, code, token) in table {
        let e = p.error();
        assert_eq!(e.code, code, "{p:?}");
        assert_eq!(e.required.as_deref(), token, "{p:?}");
        assert_eq!(e.hint.as_deref(), Some(p.hint()), "{p:?}");
    }
    assert!(
        Precondition::NodeExists { path: "A/B".into() }
            .error()
            .message
            .contains("A/B")
    );
    assert!(Precondition::ActiveScene.hint().contains("open_scene"));
    assert!(Precondition::GodotBinary.hint().contains("GODOT_BIN"));
}

#[test]
fn bridge_preconditions_fail_as_disconnected() {
    for p in [
        Precondition::BridgeConnected,
        Precondition::ActiveScene,
        Precondition::NodeExists { path: "X".into() },
        Precondition::GameNotBreaked,
    ] {
        let e = BridgeStatus::Disconnected.require(&p).unwrap_err();
        assert_eq!(e.required.as_deref(), Some("bridge_connected"), "{p:?}");
    }
}

#[test]
fn a_version_mismatch_surfaces_as_its_precondition() {
    let addon = BridgeStatus::AddonMismatch {
        found: "add-on 0.0.1 (bridge protocol 0)".into(),
    };
    let e = addon.require(&Precondition::BridgeConnected).unwrap_err();
    assert_eq!(e.required.as_deref(), Some("addon_version"));
    assert!(e.message.contains("0.0.1"), "{}", e.message);
    let godot = BridgeStatus::GodotUnsupported {
        found: "4.3.0.stable".into(),
    };
    let e = godot.require(&Precondition::ActiveScene).unwrap_err();
    assert_eq!(e.required.as_deref(), Some("godot_version"));
    let connected = BridgeStatus::Connected {
        godot_version: "4.4.1.stable.custom_build".into(),
    };
    assert!(connected.require(&Precondition::BridgeConnected).is_ok());
    let need = |v: &str| Precondition::GodotVersion {
        required: v.into(),
        found: None,
    };
    assert!(connected.require(&need("4.4.0")).is_ok());
    let e = connected.require(&need("4.5.0")).unwrap_err();
    assert_eq!(e.required.as_deref(), Some("godot_version"));
}

// The execute bit is Unix's; Windows decides by extension.
#[cfg(unix)]
#[test]
fn godot_binary_from_env_or_path() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("godot4");
    std::fs::write(&exe, "#!/bin/sh\n").unwrap();
    godot_mcp_os::fs::set_mode(&exe, 0o755).unwrap();
    let plain = dir.path().join("not_exec");
    std::fs::write(&plain, "").unwrap();
    // GODOT_BIN wins and must be an executable file.
    assert_eq!(find_godot_binary(Some(exe.as_os_str()), None).unwrap(), exe);
    for bad in [
        plain.as_os_str(),
        dir.path().as_os_str(),
        std::ffi::OsStr::new("/nonexistent/godot"),
    ] {
        let e = find_godot_binary(Some(bad), Some(dir.path().as_os_str())).unwrap_err();
        assert_eq!(e.required.as_deref(), Some("godot_binary"));
        assert!(e.message.contains("GODOT_BIN"), "{}", e.message);
    }
    // Otherwise PATH: godot or godot4.
    let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
    assert_eq!(find_godot_binary(None, Some(&path)).unwrap(), exe);
    let e = find_godot_binary(None, Some(std::ffi::OsStr::new("/nonexistent"))).unwrap_err();
    assert_eq!(e.code, ErrorCode::PreconditionFailed);
    assert_eq!(e.required.as_deref(), Some("godot_binary"));
}

#[test]
fn toolset_lists_parse() {
    let d = Toolset::parse_list("default").unwrap();
    assert_eq!(d, Toolset::DEFAULT.into_iter().collect());
    assert!(!d.contains(&Toolset::InputMap));
    let s = Toolset::parse_list("default,input_map,-undo_redo").unwrap();
    assert!(s.contains(&Toolset::InputMap) && !s.contains(&Toolset::UndoRedo));
    assert_eq!(
        Toolset::parse_list("all").unwrap().len(),
        Toolset::ALL.len()
    );
    // The toolsets family is always on.
    assert!(
        Toolset::parse_list("project")
            .unwrap()
            .contains(&Toolset::Toolsets)
    );
    assert!(
        Toolset::parse_list("nope")
            .unwrap_err()
            .contains("unknown toolset")
    );
}

/// Unset, the operator leaves every toolset within reach and the core on; named,
/// the toolsets are both the ceiling and the start set.
#[test]
fn the_operator_sets_the_ceiling_and_the_start_set() {
    let unset = ToolsetSelection::from_operator(None).unwrap();
    assert_eq!(unset.ceiling, Toolset::ALL.into_iter().collect());
    assert_eq!(unset.enabled, Toolset::DEFAULT.into_iter().collect());
    assert_eq!(ToolsetSelection::from_operator(Some(" ")).unwrap(), unset);
    let named = ToolsetSelection::from_operator(Some("project,input_map")).unwrap();
    let expected: BTreeSet<Toolset> = [Toolset::Project, Toolset::InputMap, Toolset::Toolsets]
        .into_iter()
        .collect();
    assert_eq!(named.ceiling, expected);
    assert_eq!(named.enabled, expected);

    let state = SafetyState::with_selection(ApprovalConfig::default(), named);
    // Within the ceiling: off and on again.
    assert!(state.set_toolsets(&[], &[Toolset::InputMap]).unwrap());
    assert!(state.set_toolsets(&[Toolset::InputMap], &[]).unwrap());
    // Outside it: refused whole, naming the ceiling, and nothing changes.
    let g = state.generation();
    let e = state
        .set_toolsets(&[Toolset::SceneEdit], &[Toolset::InputMap])
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolDisabled);
    assert_eq!(e.required.as_deref(), Some("scene_edit"));
    assert!(
        e.message
            .contains("GODOT_MCP_TOOLSETS=toolsets,project,input_map"),
        "{}",
        e.message
    );
    assert_eq!(state.generation(), g);
    assert!(state.is_enabled(Toolset::InputMap));
    assert!(!state.allows(Toolset::SceneEdit));
}

#[test]
fn webhook_verdicts() {
    let ok = |s: u16, b: &str| webhook_verdict(Ok((s, b.as_bytes().to_vec())));
    assert_eq!(ok(200, r#"{"approved": true}"#), WebhookVerdict::Approve);
    assert_eq!(
        ok(204, r#"{"decision": "approve"}"#),
        WebhookVerdict::Approve
    );
    assert!(
        matches!(ok(200, r#"{"approved": false, "reason": "no"}"#), WebhookVerdict::Deny(r) if r.contains("no"))
    );
    assert!(matches!(
        ok(200, r#"{"approved": "true"}"#),
        WebhookVerdict::Deny(_)
    ));
    assert!(matches!(ok(200, ""), WebhookVerdict::Deny(_)));
    assert!(matches!(
        ok(403, r#"{"approved": true}"#),
        WebhookVerdict::Deny(_)
    ));
    assert!(matches!(
        ok(500, r#"{"approved": true}"#),
        WebhookVerdict::Failed(_)
    ));
    assert!(matches!(
        webhook_verdict(Err("down".into())),
        WebhookVerdict::Failed(_)
    ));
}

// --- the call pipeline, against synthetic tools --------------------------------

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {
    #[serde(default)]
    #[allow(dead_code)]
    path: Option<crate::respath::ResPath>,
}

/// Counts of effects the synthetic tools made.
#[derive(Debug, Default)]
struct Effects {
    applied: AtomicUsize,
    ran: AtomicUsize,
}

fn meta<C>(name: &'static str, class: C) -> ToolMeta<C> {
    ToolMeta {
        name,
        title: name,
        description: "test",
        class,
        toolset: Toolset::Project,
        effect: Some(EffectKind::File),
    }
}

/// A synthetic planned tool of `class` whose apply counts in `effects`.
fn planned(effects: &Arc<Effects>, name: &'static str, class: impl Plans) -> ToolDef {
    let fx = effects.clone();
    ToolDef::planned(meta(name, class), move |_s, _a: NoArgs| {
        let fx = fx.clone();
        Plan::new(json!({"would": name, "persisted": true}), move |_| {
            fx.applied.fetch_add(1, Ordering::SeqCst);
            Ok(Map::new())
        })
    })
}

/// A synthetic one-step tool of `class` whose run counts in `effects`.
fn direct(effects: &Arc<Effects>, name: &'static str, class: impl OneStep) -> ToolDef {
    let fx = effects.clone();
    ToolDef::new(meta(name, class), move |_: Call<NoArgs>| {
        let fx = fx.clone();
        async move {
            fx.ran.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"ran": true}))
        }
    })
}

fn synthetic(effects: &Arc<Effects>) -> Vec<ToolDef> {
    // A mutating tool whose apply fails with `code`, saying whether it may have applied.
    let failing = |name, code, message: &'static str, may_have_applied: bool| {
        ToolDef::planned(meta(name, Mutating), move |_s, _a: NoArgs| {
            Plan::<Value, Value>::new(json!({"persisted": false}), move |_| {
                Err(ToolError::new(code, message)
                    .details(json!({"may_have_applied": may_have_applied})))
            })
        })
    };
    vec![
        direct(effects, "t_read", ReadOnly),
        planned(effects, "t_mut", Mutating),
        planned(effects, "t_destr", Destructive),
        direct(effects, "t_runtime", Runtime),
        direct(effects, "t_exec", Runtime).with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
        // Sent, and not answered in time: like an editor command that timed out.
        failing("t_timeout", ErrorCode::Timeout, "no answer in time", true),
        // Refused by the other side: nothing was applied.
        failing("t_refused", ErrorCode::EditorError, "refused", false),
    ]
}

fn test_state(approval: ApprovalConfig) -> (tempfile::TempDir, Arc<Served>, Arc<Effects>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    let project = Project::discover(Some(dir.path()), Path::new("/")).unwrap();
    let effects = Arc::new(Effects::default());
    let mut journal =
        godot_mcp_journal::Journal::open(&dir.path().join(".state"), project.root()).unwrap();
    journal.reconcile().unwrap();
    let state = AppState::new(
        project,
        journal,
        // Every toolset: batches here mix tools of several toolsets.
        SafetyState::new(approval, Toolset::ALL.into_iter().collect()),
    );
    let mut registry = Registry::builtin();
    for def in synthetic(&effects) {
        registry.insert_for_tests(def);
    }
    let served = Served::new(Arc::new(state), Arc::new(registry));
    (dir, Arc::new(served), effects)
}

/// What a call should do.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// The effect happened (planned tools applied / direct tools ran).
    Effect,
    /// A preview: nothing happened; `confirm_required` as given.
    Preview { confirm_required: bool },
    /// Refused with this code, naming this parameter or token; nothing happened.
    Refused(ErrorCode, &'static str),
}

#[tokio::test]
async fn every_class_times_every_flag_combination() {
    use ErrorCode::*;
    use Expect::*;
    let flags: [(&str, Value); 4] = [
        ("none", json!({})),
        ("dry_run", json!({"dry_run": true})),
        ("confirm", json!({"confirm": true})),
        ("both", json!({"dry_run": true, "confirm": true})),
    ];
    let table: [(&str, [Expect; 4]); 4] = [
        (
            "t_read",
            [
                Effect,
                Refused(InvalidParams, "dry_run"),
                Refused(InvalidParams, "confirm"),
                Refused(InvalidParams, "dry_run"),
            ],
        ),
        (
            "t_mut",
            [
                Effect,
                Preview {
                    confirm_required: false,
                },
                Refused(InvalidParams, "confirm"),
                Refused(InvalidParams, "confirm"),
            ],
        ),
        (
            "t_destr",
            [
                Refused(PreconditionFailed, "confirm"),
                Preview {
                    confirm_required: true,
                },
                Effect,
                Preview {
                    confirm_required: false,
                },
            ],
        ),
        (
            "t_runtime",
            [
                Effect,
                Refused(InvalidParams, "dry_run"),
                Refused(InvalidParams, "confirm"),
                Refused(InvalidParams, "dry_run"),
            ],
        ),
    ];
    for (tool, row) in table {
        for ((label, args), expect) in flags.iter().zip(row) {
            let (_dir, state, fx) = test_state(ApprovalConfig::default());
            let r = call(&state, tool, args.clone()).await;
            let happened = fx.applied.load(Ordering::SeqCst) + fx.ran.load(Ordering::SeqCst);
            match expect {
                Effect => {
                    let v = r.unwrap_or_else(|e| panic!("{tool} {label}: {e}"));
                    assert_eq!(happened, 1, "{tool} {label}");
                    if v.get("applied").is_some() {
                        assert_eq!(v["applied"], true);
                        assert_eq!(v["dry_run"], false);
                    }
                }
                Preview { confirm_required } => {
                    let v = r.unwrap_or_else(|e| panic!("{tool} {label}: {e}"));
                    assert_eq!(happened, 0, "{tool} {label} changed something");
                    assert_eq!(v["dry_run"], true);
                    assert_eq!(v["applied"], false);
                    assert_eq!(v["confirm_required"], confirm_required, "{tool} {label}");
                    assert_eq!(v["would"], tool);
                }
                Refused(code, what) => {
                    let e = r.expect_err(&format!("{tool} {label} should be refused"));
                    assert_eq!(happened, 0, "{tool} {label} changed something");
                    assert_eq!(e.code, code, "{tool} {label}: {e}");
                    assert_eq!(e.param.as_deref(), Some(what), "{tool} {label}: {e}");
                    if code == PreconditionFailed {
                        // t_destr is a planned tool: its effect is a file write, so the
                        // refusal says so (tests/safety.rs meets the spec's text too).
                        assert_eq!(
                            e.text(),
                            "PRECONDITION_FAILED: This call changes project files (or settings) on disk, which undo does not restore. Set confirm=True to proceed. [required=confirm]"
                        );
                        assert_eq!(e.required.as_deref(), Some("confirm"));
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn confirm_must_be_a_boolean_and_flags_are_named() {
    let (_dir, state, fx) = test_state(ApprovalConfig::default());
    for bad in [
        json!({"confirm": "true"}),
        json!({"confirm": 1}),
        json!({"dry_run": "yes"}),
    ] {
        let e = call(&state, "t_destr", bad.clone()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams, "{bad}");
        assert!(e.message.contains("must be a boolean"), "{bad}: {e}");
    }
    let e = call(&state, "t_destr", json!({"confirm": true, "extra": 1}))
        .await
        .unwrap_err();
    assert_eq!(e.param.as_deref(), Some("extra"));
    let e = call(&state, "t_destr", json!({"confirm": true, "path": 5}))
        .await
        .unwrap_err();
    assert_eq!(e.param.as_deref(), Some("path"));
    assert_eq!(fx.applied.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn disabled_toolsets_refuse_their_tools() {
    let (_dir, state, fx) = test_state(ApprovalConfig::default());
    state.safety.set_toolsets(&[], &[Toolset::Project]).unwrap();
    let e = call(&state, "t_mut", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolDisabled);
    assert_eq!(e.required.as_deref(), Some("project"));
    assert_eq!(fx.applied.load(Ordering::SeqCst), 0);
    assert!(
        state
            .safety
            .set_toolsets(&[], &[Toolset::Toolsets])
            .is_err()
    );
    let g = state.safety.generation();
    assert!(state.safety.set_toolsets(&[Toolset::Project], &[]).unwrap());
    assert_eq!(state.safety.generation(), g + 1);
    assert!(!state.safety.set_toolsets(&[Toolset::Project], &[]).unwrap());
    call(&state, "t_mut", json!({})).await.unwrap();
}

// --- the webhook, against a real local HTTP server -------------------------------

#[derive(Debug, Clone, Copy)]
enum Hook {
    Answer(u16, &'static str),
    Slow,
}

/// A one-purpose HTTP server on 127.0.0.1:0; returns its URL and the bodies it received.
async fn webhook_server(hook: Hook) -> (String, Arc<parking_lot::Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/approve", listener.local_addr().unwrap());
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let seen = seen2.clone();
            tokio::spawn(async move {
                let mut raw = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    raw.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&raw).to_string();
                    if let Some(i) = text.find("\r\n\r\n") {
                        let len: usize = text
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if raw.len() >= i + 4 + len {
                            seen.lock()
                                .push(serde_json::from_slice(&raw[i + 4..i + 4 + len]).unwrap());
                            break;
                        }
                    }
                }
                match hook {
                    Hook::Slow => tokio::time::sleep(Duration::from_secs(5)).await,
                    Hook::Answer(status, body) => {
                        let answer = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = sock.write_all(answer.as_bytes()).await;
                    }
                }
            });
        }
    });
    (url, seen)
}

async fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/approve", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn config(url: &str, fail_open: bool) -> ApprovalConfig {
    ApprovalConfig {
        webhook: Some(webhook::WebhookUrl::parse(url).unwrap()),
        fail_open,
        webhook_timeout: Duration::from_millis(300),
        require_elicitation: false,
    }
}

#[tokio::test]
async fn webhook_gate_allows_only_explicit_approval_and_fails_closed() {
    let cases: Vec<(&str, Option<Hook>, bool, bool)> = vec![
        // (label, server behaviour (None = connection refused), fail_open, allowed)
        (
            "approve",
            Some(Hook::Answer(200, r#"{"approved": true}"#)),
            false,
            true,
        ),
        (
            "deny",
            Some(Hook::Answer(
                200,
                r#"{"approved": false, "reason": "not today"}"#,
            )),
            false,
            false,
        ),
        (
            "500",
            Some(Hook::Answer(500, r#"{"approved": true}"#)),
            false,
            false,
        ),
        ("slow", Some(Hook::Slow), false, false),
        ("refused", None, false, false),
        (
            "deny fail-open",
            Some(Hook::Answer(200, r#"{"approved": false}"#)),
            true,
            false,
        ),
        ("500 fail-open", Some(Hook::Answer(500, "")), true, true),
        ("slow fail-open", Some(Hook::Slow), true, true),
        ("refused fail-open", None, true, true),
    ];
    for (label, hook, fail_open, allowed) in cases {
        let (url, seen) = match hook {
            Some(h) => {
                let (u, s) = webhook_server(h).await;
                (u, Some(s))
            }
            None => (refused_url().await, None),
        };
        let (_dir, state, fx) = test_state(config(&url, fail_open));
        let r = call(&state, "t_destr", json!({"confirm": true})).await;
        assert_eq!(r.is_ok(), allowed, "{label}: {r:?}");
        assert_eq!(
            fx.applied.load(Ordering::SeqCst),
            usize::from(allowed),
            "{label}"
        );
        if let Err(e) = &r {
            assert_eq!(e.code, ErrorCode::ApprovalDenied, "{label}");
        }
        if label == "deny" {
            assert!(r.as_ref().unwrap_err().message.contains("not today"));
        }
        if let Some(seen) = seen
            && !label.starts_with("slow")
        {
            let body = seen.lock()[0].clone();
            assert_eq!(body["tool"], "t_destr", "{label}");
            assert_eq!(body["class"], "destructive");
            assert_eq!(body["arguments"], json!({"confirm": true}));
            assert_eq!(body["batch"], Value::Null);
            assert!(body.get("principal").is_some());
        }
    }
}

#[tokio::test]
async fn webhook_is_not_asked_for_reads_and_dry_runs() {
    let (url, seen) = webhook_server(Hook::Answer(200, r#"{"approved": false}"#)).await;
    let (_dir, state, _fx) = test_state(config(&url, false));
    call(&state, "t_read", json!({})).await.unwrap();
    call(&state, "t_runtime", json!({})).await.unwrap();
    call(&state, "t_destr", json!({"dry_run": true}))
        .await
        .unwrap();
    assert!(seen.lock().is_empty());
    // A runtime tool flagged executes_code is gated.
    let e = call(&state, "t_exec", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ApprovalDenied);
    assert_eq!(seen.lock().len(), 1);
}

#[tokio::test]
async fn batch_goes_to_the_gate_as_its_most_dangerous_entry() {
    let (url, seen) = webhook_server(Hook::Answer(200, r#"{"approved": true}"#)).await;
    let (_dir, state, fx) = test_state(config(&url, false));
    let r = call(
        &state,
        "run_commands",
        json!({"commands": [
            {"tool": "t_mut", "arguments": {}},
            {"tool": "t_destr", "arguments": {"confirm": true}},
            {"tool": "t_read"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(r["completed"], 3);
    assert_eq!(r["class"], "destructive");
    assert_eq!(fx.applied.load(Ordering::SeqCst), 2);
    let body = seen.lock()[0].clone();
    assert_eq!(body["tool"], "run_commands");
    assert_eq!(body["class"], "destructive");
    assert_eq!(body["batch"][1]["tool"], "t_destr");
    assert_eq!(body["batch"][1]["class"], "destructive");
    assert_eq!(seen.lock().len(), 1, "one approval for the whole batch");
}

#[tokio::test]
async fn elicitation_required_without_a_client_is_refused() {
    let (_dir, state, fx) = test_state(ApprovalConfig {
        require_elicitation: true,
        ..Default::default()
    });
    let e = call(&state, "t_mut", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ApprovalDenied);
    assert!(e.message.contains("cannot answer elicitation"), "{e}");
    assert_eq!(fx.applied.load(Ordering::SeqCst), 0);
}

/// A run_commands entry that timed out was sent and may still apply: the batch's
/// error says so at the top (`may_have_applied`) and its hint names the entry. An
/// entry that was refused outright does not.
#[tokio::test]
async fn a_batch_entry_that_timed_out_may_have_applied() {
    let (_d, state, fx) = test_state(ApprovalConfig::default());
    let batch = |middle: &str| {
        json!({"commands": [
            {"tool": "t_mut", "arguments": {}},
            {"tool": middle, "arguments": {}},
            {"tool": "t_mut", "arguments": {}},
        ]})
    };
    let e = call(&state, "run_commands", batch("t_timeout"))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Timeout);
    let details = e.details.clone().unwrap();
    assert_eq!(details["may_have_applied"], true, "{details}");
    assert_eq!(details["aborted_at"], 1, "{details}");
    let hint = e.hint.clone().unwrap_or_default();
    assert!(
        hint.contains("commands[1] (t_timeout) timed out"),
        "the hint must name the entry: {hint}"
    );
    assert_eq!(fx.applied.load(Ordering::SeqCst), 1);
    let e = call(&state, "run_commands", batch("t_refused"))
        .await
        .unwrap_err();
    let details = e.details.clone().unwrap();
    assert_eq!(details["may_have_applied"], false, "{details}");
    assert!(!e.hint.unwrap_or_default().contains("timed out"));
}

/// Every precondition, once, so a new one cannot be left out of the hint check below
/// (the match is exhaustive).
fn every_precondition() -> Vec<Precondition> {
    let all = vec![
        Precondition::BridgeConnected,
        Precondition::ActiveScene,
        Precondition::NodeExists { path: "A".into() },
        Precondition::GodotBinary,
        Precondition::GodotVersion {
            required: "4.4".into(),
            found: None,
        },
        Precondition::GameNotBreaked,
        Precondition::AddonVersion {
            required: "1".into(),
            found: "0".into(),
        },
        Precondition::ExportConfirmed {
            target: "/elsewhere/game.x86_64".into(),
            outside: true,
        },
    ];
    for p in &all {
        match p {
            Precondition::BridgeConnected
            | Precondition::ActiveScene
            | Precondition::NodeExists { .. }
            | Precondition::GodotBinary
            | Precondition::GodotVersion { .. }
            | Precondition::GameNotBreaked
            | Precondition::AddonVersion { .. }
            | Precondition::ExportConfirmed { .. } => {}
        }
    }
    all
}

/// Rust source, lexed just enough: which bytes are code (not a comment, not inside
/// a literal), and every string literal's text with its byte span.
struct Lexed {
    code: Vec<bool>,
    strings: Vec<(usize, usize, String)>,
}

fn lex(src: &str) -> Lexed {
    let b = src.as_bytes();
    let mut code = vec![true; b.len()];
    let mut strings = Vec::new();
    let mut i = 0;
    let blank = |code: &mut Vec<bool>, from: usize, to: usize| {
        for c in code.iter_mut().take(to.min(b.len())).skip(from) {
            *c = false;
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = src[i..].find('\n').map_or(b.len(), |e| i + e);
            blank(&mut code, i, end);
            i = end;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            let open = i + 1 + hashes;
            if b.get(open) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let end = src[open + 1..]
                .find(&close)
                .map_or(b.len(), |e| open + 1 + e);
            strings.push((i, end, src[open + 1..end].to_string()));
            let stop = (end + close.len()).min(b.len());
            blank(&mut code, i, stop);
            i = stop;
        } else if b[i] == b'"' {
            let mut text = String::new();
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' {
                    j += 1;
                    if b.get(j) == Some(&b'\n') {
                        while j + 1 < b.len() && b[j + 1].is_ascii_whitespace() {
                            j += 1;
                        }
                        text.push(' ');
                    } else if let Some(c) = b.get(j) {
                        text.push(if *c == b'n' { ' ' } else { *c as char });
                    }
                } else {
                    let ch = src[j..].chars().next().unwrap_or(' ');
                    text.push(ch);
                    j += ch.len_utf8() - 1;
                }
                j += 1;
            }
            strings.push((i, j, text));
            blank(&mut code, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('"', '\\', '\u{1}'), or a lifetime (left as code).
            let end = if b.get(i + 1) == Some(&b'\\') {
                src[i + 2..].find('\'').map(|e| i + 2 + e)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match end {
                Some(e) => {
                    blank(&mut code, i, e + 1);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    Lexed { code, strings }
}

/// The text of the string literals of the expression that starts at `from`: up to
/// the `,`, `;` or closing bracket that ends it.
fn literals_after(src: &str, lx: &Lexed, from: usize) -> String {
    let b = src.as_bytes();
    let mut i = from;
    // `["hint"] = json!(…)`, `"hint": …`, `hint: …`
    while i < b.len() && lx.code[i] && b" \n\t]=:".contains(&b[i]) {
        i += 1;
    }
    let mut depth = 0i32;
    let mut out = String::new();
    while i < b.len() {
        if !lx.code[i] {
            if let Some((_, end, text)) = lx.strings.iter().find(|(s, _, _)| *s == i) {
                out.push_str(text);
                out.push(' ');
                i = end + 1;
                continue;
            }
            i += 1;
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' | b',' if depth == 0 => break,
            b')' | b']' | b'}' => depth -= 1,
            b';' => break,
            _ => {}
        }
        i += 1;
    }
    out
}

fn rust_sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// No hint, precondition text or tool description names a tool that does not exist.
/// A tool-like name is a snake_case word starting like a registered tool does
/// (`create_`, `stop_`, …, or `godot_`); each must be a tool of some toolset, or a
/// word that is known not to be a tool (a parameter, a precondition token, a
/// toolset). The hints are read from this crate's source: every `.hint(…)`,
/// `"hint"`, `hint: …` and `undo_hint` text.
#[test]
fn every_hint_names_only_tools_that_exist() {
    let registry = Registry::builtin();
    let tools: BTreeSet<&str> = registry.iter().map(|d| d.meta.name).collect();
    let prefixes: BTreeSet<&str> = tools
        .iter()
        .filter_map(|t| t.split('_').next())
        .chain(["godot"])
        .collect();
    let mut not_tools: BTreeSet<String> = BTreeSet::new();
    for def in registry.iter() {
        if let Some(Value::Object(props)) = def.input_schema().get("properties") {
            not_tools.extend(props.keys().cloned());
        }
    }
    for p in every_precondition() {
        not_tools.extend(p.token().map(str::to_owned));
    }
    not_tools.extend(Toolset::ALL.map(|t| t.as_str().to_owned()));
    // Names that are not tools: the add-on and its folder, Godot's export preset
    // file, the MCP notification and Godot's own `--export-release` flag.
    not_tools.extend(
        [
            "godot_mcp",
            "export_presets",
            "list_changed",
            "export_release",
            "run_commands_entry",
        ]
        .map(str::to_owned),
    );

    let mut texts: Vec<(String, String)> = Vec::new();
    for p in every_precondition() {
        texts.push((format!("precondition {:?}", p.token()), p.hint().to_owned()));
        let e = p.error();
        texts.push((format!("precondition {:?}", p.token()), e.message));
    }
    for def in registry.iter() {
        texts.push((
            format!("description of {}", def.meta.name),
            def.meta.description.to_owned(),
        ));
    }
    let mut sources = Vec::new();
    rust_sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut sources,
    );
    let mut hints = 0;
    for (path, src) in &sources {
        let lx = lex(src);
        // Where a hint's text starts: after `.hint(` or a `hint:` field in code,
        // and after a "hint" / "undo_hint" key literal.
        let mut starts: Vec<usize> = Vec::new();
        for needle in [".hint(", "hint: ", "hint:\n"] {
            starts.extend(
                src.match_indices(needle)
                    .filter(|(at, _)| lx.code[*at])
                    .map(|(at, n)| at + n.len()),
            );
        }
        starts.extend(
            lx.strings
                .iter()
                .filter(|(_, _, t)| t == "hint" || t == "undo_hint")
                .map(|(_, end, _)| end + 1),
        );
        for at in starts {
            let text = literals_after(src, &lx, at);
            if !text.trim().is_empty() {
                hints += 1;
                let line = src[..at].lines().count();
                texts.push((format!("{}:{line}", path.display()), text));
            }
        }
    }
    assert!(hints > 50, "only {hints} hints found in the source");
    let mut wrong = Vec::new();
    for (where_, text) in &texts {
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let shaped = word.contains('_')
                && word.starts_with(|c: char| c.is_ascii_lowercase())
                && !word.ends_with('_')
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            let toolish = shaped && word.split('_').next().is_some_and(|p| prefixes.contains(p));
            if toolish && !tools.contains(word) && !not_tools.contains(word) {
                wrong.push(format!("{where_}: `{word}` in {text:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "texts name tools that do not exist:\n{}",
        wrong.join("\n")
    );
}
