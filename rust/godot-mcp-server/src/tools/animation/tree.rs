//! AnimationTree graphs in the live editor: a state machine's states and transitions, a
//! blend tree's nodes and connections, each ONE undo action on the edited scene, taking
//! `scene`, `save` and `check` as the other animation tools do (tools/animation/edit.rs).

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{int, meta};
use crate::honesty::InSceneOrNull;
use crate::tools::ToolDef;
use crate::tools::kit::editor::{in_scene, in_scene_args, node_edit, reply_fields, wire_name};

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GraphNodeArgs {
    /// AnimationTree node path.
    tree: String,
    /// Nested graph path (graph node names joined by /); default: the tree's root,
    /// created when missing.
    #[serde(default)]
    graph: String,
    /// Graph node name.
    name: String,
    /// AnimationNode class (default AnimationNodeAnimation).
    #[serde(default)]
    node_type: Option<String>,
    /// AnimationNodeAnimation: the animation it plays.
    #[serde(default)]
    animation: Option<String>,
    /// Position in the graph editor [x, y].
    #[serde(default)]
    position: Option<[f64; 2]>,
}
}

/// `AnimationNodeStateMachineTransition.SwitchMode`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SwitchMode {
    #[default]
    Immediate,
    Sync,
    AtEnd,
}

/// `AnimationNodeStateMachineTransition.AdvanceMode`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AdvanceMode {
    Disabled,
    #[default]
    Enabled,
    Auto,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransitionArgs {
    /// AnimationTree node path.
    tree: String,
    /// Nested state machine path; default: the tree's root.
    #[serde(default)]
    state_machine: String,
    /// From state (Start included).
    from: String,
    /// To state (End included).
    to: String,
    #[serde(default)]
    switch_mode: SwitchMode,
    #[serde(default)]
    advance_mode: AdvanceMode,
    /// Condition parameter name that triggers it.
    #[serde(default)]
    advance_condition: Option<String>,
    /// Cross-fade seconds.
    #[serde(default)]
    xfade_time: Option<f64>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BlendConnectArgs {
    /// AnimationTree node path.
    tree: String,
    /// Nested blend tree path; default: the tree's root.
    #[serde(default)]
    blend_tree: String,
    /// Node whose input is fed ("output" is the result).
    to: String,
    /// Input port of `to`.
    port: u32,
    /// Node whose output feeds it.
    from: String,
}
}

reply_fields!(
    pub(crate) struct GraphNodeAdded {
        tree: String,
        graph: String,
        name: String,
        node_type: String,
    }
);

reply_fields!(
    pub(crate) struct TransitionAdded {
        tree: String,
        state_machine: String,
        from: String,
        to: String,
        transition_count: i64,
    }
);

reply_fields!(
    pub(crate) struct BlendConnected {
        tree: String,
        blend_tree: String,
        to: String,
        port: i64,
        from: String,
    }
);

fn graph_node(a: GraphNodeArgs, graph: cmd::Graph) -> (String, cmd::AnimationTreeAddNode) {
    let p = cmd::AnimationTreeAddNode {
        tree: a.tree.clone(),
        parent: a.graph,
        graph,
        name: a.name,
        node_type: a
            .node_type
            .unwrap_or_else(|| "AnimationNodeAnimation".into()),
        animation: a.animation,
        position: a.position.unwrap_or([0.0, 0.0]),
    };
    (a.tree, p)
}

/// An AnimationTree's graphs (state machine, blend tree).
pub(super) fn tools() -> Vec<ToolDef> {
    use crate::rules::class::Mutating;
    // One handler for both graphs an AnimationTree holds; only the graph differs.
    let add_graph_node = |graph: cmd::Graph| {
        move |state, a: GraphNodeArgs| {
            let (scene, save, check) = (a.scene.clone(), a.save, a.check.clone());
            let (tree, p) = graph_node(a, graph);
            in_scene(state, scene, save, check, move |state| {
                node_edit::<_, GraphNodeAdded, InSceneOrNull>(state, "set_property", tree, p)
            })
        }
    };
    vec![
        ToolDef::planned(
            meta(
                Mutating,
                "add_state_machine_state",
                "Add a state machine state",
                "Add a state (an AnimationNode, e.g. one playing an animation) to an \
                 AnimationTree's state machine (one undo action).",
            ),
            add_graph_node(cmd::Graph::StateMachine),
        ),
        ToolDef::planned(
            meta(
                Mutating,
                "connect_state_machine_states",
                "Connect state machine states",
                "Add a transition between two states of an AnimationTree's state machine: \
                 switch/advance mode, condition, cross-fade (one undo action).",
            ),
            |state, a: TransitionArgs| {
                let p = cmd::AnimationTreeConnect {
                    tree: a.tree.clone(),
                    state_machine: a.state_machine,
                    from: a.from,
                    to: a.to,
                    switch_mode: wire_name(a.switch_mode),
                    advance_mode: wire_name(a.advance_mode),
                    advance_condition: a.advance_condition,
                    xfade_time: a.xfade_time.unwrap_or(0.0),
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, TransitionAdded, InSceneOrNull>(state, "set_property", a.tree, p)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Mutating,
                "add_blend_tree_node",
                "Add a blend tree node",
                "Add a node (Animation, Blend2, TimeScale, …) to an AnimationTree's blend \
                 tree (one undo action).",
            ),
            add_graph_node(cmd::Graph::BlendTree),
        ),
        ToolDef::planned(
            meta(
                Mutating,
                "connect_blend_tree_nodes",
                "Connect blend tree nodes",
                "Feed one blend tree node's output into another's input port (\"output\" is \
                 the result); an occupied port is refused (one undo action).",
            ),
            |state, a: BlendConnectArgs| {
                let p = cmd::AnimationTreeBlendConnect {
                    port: int("port", a.port)?,
                    tree: a.tree.clone(),
                    blend_tree: a.blend_tree,
                    to: a.to,
                    from: a.from,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, BlendConnected, InSceneOrNull>(state, "set_property", a.tree, p)
                })
            },
        ),
    ]
}
