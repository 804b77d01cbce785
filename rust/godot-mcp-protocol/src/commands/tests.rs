use super::*;

fn names(pick: impl Fn(Kind) -> bool) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|(_, k)| pick(*k))
        .map(|(m, _)| *m)
        .collect()
}

#[test]
fn only_file_writers_may_save() {
    assert_eq!(
        names(Kind::may_save_file),
        [
            SCENE_CREATE,
            SCENE_SAVE,
            RESOURCE_SET_PROPERTY,
            SCENE_SAVE_ALL,
            THEME_SET_ITEM
        ]
    );
    const { assert!(SceneSave::MAY_SAVE_FILE && !SceneOpen::MAY_SAVE_FILE) };
    assert_eq!(kind_of("unknown.command"), None);
    // One row per name, and every name is its struct's METHOD.
    let mut seen: Vec<_> = TABLE.iter().map(|(m, _)| *m).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), TABLE.len(), "a name twice in the table");
    assert_eq!(
        names(Kind::is_read_only).len(),
        16,
        "{:?}",
        names(Kind::is_read_only)
    );
}

/// A request decodes once, by its name, into its command's variant; an unknown name
/// and parameters that do not fit are refused, never run.
#[test]
fn a_request_decodes_once_by_its_name() {
    use crate::{ErrorCode, ErrorEffect};
    use serde_json::json;
    let r = Request::decode(NODE_DELETE, &json!({"node": "S"})).unwrap();
    assert_eq!(r, Request::NodeDelete(NodeDelete { node: "S".into() }));
    assert_eq!(r.method(), NODE_DELETE);
    assert_eq!(
        Request::decode(PING, &json!(null)).unwrap(),
        Request::Ping(Ping {})
    );
    let e = Request::decode("launch.missiles", &json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownCommand);
    assert_eq!(e.effect, Some(ErrorEffect::Unchanged));
    let e = Request::decode(NODE_DELETE, &json!({"node": "S", "x": 1})).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert!(e.message.starts_with("node.delete: "), "{}", e.message);
}

/// Each command's parameters survive serialize → deserialize, carry their command's
/// name, and a field the struct does not know is refused.
#[test]
fn every_command_params_round_trip() {
    use serde::de::DeserializeOwned;
    use serde_json::json;

    fn round<T: BridgeCommand + DeserializeOwned + PartialEq + std::fmt::Debug>(
        v: T,
    ) -> &'static str {
        let j = v.params();
        assert_eq!(serde_json::from_value::<T>(j.clone()).unwrap(), v, "{j}");
        let mut extra = j.clone();
        if let Some(m) = extra.as_object_mut() {
            m.insert("extra".into(), json!(1));
            assert!(serde_json::from_value::<T>(extra).is_err(), "{}", T::METHOD);
        }
        T::METHOD
    }
    let s = String::from;
    let v2 = Value::Vector2([1.0, 2.5]);
    let set = PropertySet {
        node: s("A"),
        property: s("position"),
        value: v2.clone(),
    };
    let conn = Connection {
        from: s("B"),
        signal: s("pressed"),
        to: s("."),
        method: s("go"),
    };
    let seen = [
        round(Ping {}),
        round(EditorState {}),
        round(SceneTree {
            offset: 3,
            limit: 10,
        }),
        round(SceneOpen {
            path: s("res://a.tscn"),
        }),
        round(SceneCreate {
            path: s("res://b.tscn"),
            root_type: s("Node2D"),
            root_name: None,
        }),
        round(SceneSave { path: None }),
        round(SceneClose {
            path: Some(s("res://a.tscn")),
        }),
        round(SceneReload { path: None }),
        round(NodeCreate {
            parent: s("."),
            node_type: s("Sprite2D"),
            name: s("S"),
        }),
        round(NodeRename {
            node: s("S"),
            new_name: s("T"),
        }),
        round(NodeMove {
            node: s("S"),
            new_parent: s("A"),
        }),
        round(NodeDuplicate {
            node: s("S"),
            new_name: Some(s("S2")),
        }),
        round(NodeDelete { node: s("S") }),
        round(NodeGetProperty {
            node: s("S"),
            property: s("position"),
        }),
        round(NodeSetProperty(set.clone())),
        round(NodePersistence {
            node: s("S"),
            op: s("set_property"),
        }),
        round(ScriptAttach {
            node: s("S"),
            script: s("res://s.gd"),
        }),
        round(ScriptDetach { node: s("S") }),
        round(SignalConnect(conn.clone())),
        round(SignalDisconnect(conn)),
        round(ResourceSetProperty {
            path: s("res://r.tres"),
            property: s("hp"),
            value: Value::Int(3),
        }),
        round(BatchApply {
            sets: vec![set],
            undo: UndoPolicy::Bypass,
        }),
        round(Steps {
            action: s("MCP: add"),
            steps: vec![
                Step::Create {
                    parent: s("."),
                    node_type: s("StaticBody2D"),
                    name: s("Body"),
                },
                Step::Set {
                    node: s("$0"),
                    property: s("position"),
                    value: v2.clone(),
                },
                Step::TileCells {
                    node: s("G"),
                    cells: vec![TileCell {
                        coords: [0, 1],
                        source: 0,
                        atlas: [1, 0],
                        alternative: 0,
                    }],
                },
                Step::FitShape {
                    node: s("$0"),
                    to: s("Sprite"),
                    shape: FitKind::Capsule,
                },
                Step::TilesetAtlas {
                    node: s("G"),
                    texture: s("res://t.png"),
                    tile_size: [16, 16],
                    source_id: Some(2),
                },
                Step::TilesetTerrainSet {
                    node: s("G"),
                    mode: 0,
                    terrains: vec![Terrain {
                        name: s("grass"),
                        color: [0.0, 1.0, 0.0, 1.0],
                    }],
                },
            ],
            check_only: true,
            scene: Some(s("res://a.tscn")),
            root_id: Some(12),
            check_in: Some(CheckIn::NewRoot {
                node_type: s("Node2D"),
                name: s("Level"),
            }),
        }),
        round(Cells {
            node: s("G"),
            offset: 0,
            limit: 5,
        }),
        round(MeshLibraryItems {
            path: s("res://lib.tres"),
        }),
        round(Undo {
            action: Some("godot-mcp change x".into()),
            scene: Some("res://a.tscn".into()),
            root_id: Some(9),
        }),
        round(Redo {}),
        round(History {
            scene: Some("res://a.tscn".into()),
        }),
        round(EditorScreenshot {
            view: ScreenshotView::TwoD,
            max_edge: Some(640),
            max_bytes: 1 << 22,
            node: Some(s("S")),
        }),
        round(EditorMonitors {}),
        round(FilesystemScan {}),
        round(FilesystemStatus {}),
        round(FilesystemUpdate {
            paths: vec![s("res://a.gd")],
        }),
        round(AudioAddPlayer {
            parent: s("."),
            name: s("Music"),
            player_type: s("AudioStreamPlayer"),
            stream: Some(s("res://a.ogg")),
            bus: None,
            autoplay: true,
            volume_db: Some(-3.0),
        }),
        round(ShaderAssignMaterial {
            node: s("S"),
            shader: s("res://s.gdshader"),
        }),
        round(ShaderUniforms { node: s("S") }),
        round(ShaderSetUniform {
            node: s("S"),
            name: s("tint"),
            value: Value::Color([1.0, 0.0, 0.0, 1.0]),
        }),
    ];
    // One params struct for every command, in documentation order.
    let all: Vec<_> = TABLE.iter().map(|(m, _)| *m).collect();
    assert_eq!(seen, all[..seen.len()]);
    // An undo without `action` is the wire it always was.
    assert_eq!(Undo::default().params(), serde_json::json!({}));

    let authoring = [
        round(NodeInstance {
            parent: s("."),
            scene: s("res://p.tscn"),
            name: Some(s("P")),
        }),
        round(NodeGroup {
            node: s("A"),
            group: s("g"),
            add: false,
        }),
        round(NodeEditableChildren {
            node: s("P"),
            editable: true,
        }),
        round(EditorSelect {
            nodes: vec![s("A"), s("B")],
        }),
        round(EditorSelection {}),
        round(SceneSaveAll {}),
        round(NodeConnections { node: s("A") }),
        round(NodeProperties {
            node: s("A"),
            list: true,
            offset: 4,
            limit: Some(20),
        }),
        round(AnimationAdd {
            player: s("AP"),
            library: s("moves"),
            name: s("walk"),
            length: 1.5,
            loop_mode: LoopMode::Pingpong,
            step: Some(0.25),
            autoplay: true,
            tracks: vec![NewTrack {
                track_type: TrackType::Value,
                path: s("Sprite:position"),
                update_mode: Some(UpdateMode::Discrete),
                interpolation: None,
                keys: Vec::new(),
            }],
        }),
        round(AnimationRemove {
            player: s("AP"),
            animation: s("walk"),
        }),
        round(AnimationTrackAdd {
            player: s("AP"),
            animation: s("walk"),
            track_type: TrackType::Rotation3d,
            path: s("Mesh"),
            update_mode: None,
            interpolation: Some(Interpolation::CubicAngle),
            keys: vec![AnimationKey {
                time: 0.25,
                value: json!([0, 1, 0]),
                transition: 1.0,
            }],
        }),
        round(AnimationTrackRemove {
            player: s("AP"),
            animation: s("walk"),
            track: 2,
        }),
        round(AnimationKeyInsert {
            player: s("AP"),
            animation: s("walk"),
            track: 0,
            time: 0.5,
            value: json!({"$type": "Vector2", "x": 1, "y": 2}),
            transition: 0.5,
            more: vec![AnimationKey {
                time: 1.0,
                value: json!([3, 4]),
                transition: 2.0,
            }],
        }),
        round(AnimationKeyRemove {
            player: s("AP"),
            animation: s("walk"),
            track: 0,
            time: 0.5,
        }),
        round(AnimationGet {
            player: s("AP"),
            animation: s("walk"),
            max_keys: Some(10),
        }),
        round(AnimationSet {
            player: s("AP"),
            animation: s("walk"),
            length: None,
            step: Some(0.1),
            loop_mode: Some(LoopMode::Linear),
            tracks: vec![TrackSettings {
                track: 0,
                update_mode: Some(UpdateMode::Discrete),
                interpolation: None,
            }],
        }),
        round(AnimationTreeAddNode {
            tree: s("AT"),
            parent: s("Sub"),
            graph: Graph::BlendTree,
            name: s("Blend"),
            node_type: s("AnimationNodeBlend2"),
            animation: None,
            position: [1.0, 2.0],
        }),
        round(AnimationTreeConnect {
            tree: s("AT"),
            state_machine: String::new(),
            from: s("Start"),
            to: s("Idle"),
            switch_mode: s("at_end"),
            advance_mode: s("auto"),
            advance_condition: Some(s("ready")),
            xfade_time: 0.25,
        }),
        round(AnimationTreeBlendConnect {
            tree: s("AT"),
            blend_tree: String::new(),
            to: s("output"),
            port: 0,
            from: s("Blend"),
        }),
        round(ThemeSetItem {
            path: s("res://t.tres"),
            theme_type: s("Button"),
            kind: ThemeKind::Stylebox,
            name: s("normal"),
            value: json!({"bg_color": {"$type": "Color", "r": 1, "g": 0, "b": 0, "a": 1}}),
        }),
        round(ControlThemeOverride {
            node: s("L"),
            kind: ThemeKind::Color,
            name: s("font_color"),
            value: serde_json::Value::Null,
        }),
        round(ControlAnchorsPreset {
            node: s("L"),
            preset: s("full_rect"),
        }),
        round(ControlAddContainer {
            parent: s("."),
            container_type: s("GridContainer"),
            name: s("G"),
            separation: Some(4),
            columns: Some(3),
            margin: None,
        }),
    ];
    // One params struct for every authoring command too, in documentation order.
    assert_eq!(seen.len() + authoring.len(), all.len());
    assert_eq!(authoring, all[seen.len()..]);
}

/// The wire names the add-on reads: `type` for a node class, `op` tags, a value in
/// its JSON form, optional paths as `null`.
#[test]
fn params_keep_their_wire_names() {
    let j = NodeCreate {
        parent: ".".into(),
        node_type: "Node2D".into(),
        name: "N".into(),
    }
    .params();
    assert_eq!(
        j,
        serde_json::json!({"parent": ".", "type": "Node2D", "name": "N"})
    );
    assert_eq!(
        SceneSave { path: None }.params(),
        serde_json::json!({"path": null})
    );
    let j = NodeSetProperty(PropertySet {
        node: "A".into(),
        property: "position".into(),
        value: Value::Vector2([1.0, 2.0]),
    })
    .params();
    assert_eq!(
        j,
        serde_json::json!({"node": "A", "property": "position",
            "value": {"$type": "Vector2", "x": 1.0, "y": 2.0}})
    );
    // Authoring: `type` for a container class, an absent name as `null`, an unset
    // page or key limit left out (the add-on's default applies), enums by name.
    let j = ControlAddContainer {
        parent: ".".into(),
        container_type: "VBoxContainer".into(),
        name: "V".into(),
        separation: None,
        columns: None,
        margin: Some(2),
    }
    .params();
    assert_eq!(
        j,
        serde_json::json!({"parent": ".", "type": "VBoxContainer", "name": "V",
            "separation": null, "columns": null, "margin": 2})
    );
    assert_eq!(
        NodeInstance {
            parent: ".".into(),
            scene: "res://p.tscn".into(),
            name: None
        }
        .params(),
        serde_json::json!({"parent": ".", "scene": "res://p.tscn", "name": null})
    );
    assert_eq!(
        NodeProperties {
            node: "A".into(),
            list: false,
            offset: 0,
            limit: None
        }
        .params(),
        serde_json::json!({"node": "A", "list": false, "offset": 0})
    );
    assert_eq!(
        AnimationGet {
            player: "AP".into(),
            animation: "walk".into(),
            max_keys: None
        }
        .params(),
        serde_json::json!({"player": "AP", "animation": "walk"})
    );
    let j = AnimationTrackAdd {
        player: "AP".into(),
        animation: "walk".into(),
        track_type: TrackType::Position3d,
        path: "Mesh".into(),
        update_mode: None,
        interpolation: None,
        keys: Vec::new(),
    }
    .params();
    assert_eq!(j["track_type"], "position_3d");
    // No keys: the wire is as before (no `keys` member).
    assert!(j.get("keys").is_none(), "{j}");
    assert_eq!(
        AnimationAdd {
            player: "AP".into(),
            library: String::new(),
            name: "walk".into(),
            length: 1.0,
            loop_mode: LoopMode::default(),
            step: None,
            autoplay: false,
            tracks: Vec::new(),
        }
        .params()["loop_mode"],
        "none"
    );
    assert_eq!(SceneSaveAll {}.params(), serde_json::json!({}));
    let shot = EditorScreenshot {
        view: ScreenshotView::ThreeD,
        max_edge: None,
        max_bytes: 10,
        node: None,
    }
    .params();
    assert_eq!(shot, serde_json::json!({"view": "3d", "max_bytes": 10}));
}
