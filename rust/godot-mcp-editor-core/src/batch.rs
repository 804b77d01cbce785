//! The undo rule of `scene.batch.apply`: a batch is ONE action on the editor's undo
//! history, unless it sets more than [`UNDO_BATCH_LIMIT`] nodes, in which case it bypasses
//! the history for speed and says `undoable: false` (spec: safety-model.md).

use std::collections::BTreeSet;

pub use godot_mcp_protocol::commands::UNDO_BATCH_LIMIT;

use crate::command::PropertySet;

/// How a batch is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoPolicy {
    /// All sets in one `EditorUndoRedoManager` action.
    OneAction,
    /// Set directly; not on the undo history.
    Bypass,
}

impl UndoPolicy {
    pub fn undoable(self) -> bool {
        self == UndoPolicy::OneAction
    }
}

/// The distinct nodes a batch touches.
pub fn distinct_nodes(sets: &[PropertySet]) -> usize {
    sets.iter()
        .map(|s| s.node.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The policy for a batch: counted in distinct nodes, as the spec's "batch sets above
/// 20 nodes" says.
pub fn policy(sets: &[PropertySet]) -> UndoPolicy {
    if distinct_nodes(sets) > UNDO_BATCH_LIMIT {
        UndoPolicy::Bypass
    } else {
        UndoPolicy::OneAction
    }
}

/// The action name shown in the editor's History dock.
pub fn action_name(sets: &[PropertySet]) -> String {
    format!(
        "MCP: batch of {} set(s) on {} node(s)",
        sets.len(),
        distinct_nodes(sets)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn sets(nodes: usize, per_node: usize) -> Vec<PropertySet> {
        (0..nodes)
            .flat_map(|n| {
                (0..per_node).map(move |p| PropertySet {
                    node: format!("N{n}"),
                    property: format!("p{p}"),
                    value: Value::Int(1),
                })
            })
            .collect()
    }

    #[test]
    fn twenty_nodes_are_one_action_twenty_one_bypass() {
        assert_eq!(policy(&sets(1, 1)), UndoPolicy::OneAction);
        assert_eq!(policy(&sets(20, 3)), UndoPolicy::OneAction);
        assert_eq!(policy(&sets(21, 1)), UndoPolicy::Bypass);
        assert!(!policy(&sets(21, 1)).undoable());
        // Many sets on few nodes stay undoable: the rule counts nodes.
        assert_eq!(policy(&sets(2, 50)), UndoPolicy::OneAction);
        assert_eq!(
            action_name(&sets(2, 2)),
            "MCP: batch of 4 set(s) on 2 node(s)"
        );
    }
}
