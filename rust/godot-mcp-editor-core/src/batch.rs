//! Executing `scene.batch.apply` as the server decided it: the server applies the undo
//! rule (a batch is ONE action on the editor's undo history, unless it sets more than
//! [`UNDO_BATCH_LIMIT`] nodes; spec: safety-model.md) and sends its [`UndoPolicy`]; the
//! add-on does what the policy says and reports it, and never decides again.

use std::collections::BTreeSet;

pub use godot_mcp_protocol::commands::{UNDO_BATCH_LIMIT, UndoPolicy};

use crate::command::PropertySet;

/// The distinct nodes a batch touches.
pub fn distinct_nodes(sets: &[PropertySet]) -> usize {
    sets.iter()
        .map(|s| s.node.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// What the add-on does for a batch sent with `undo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// The undo action the sets go into (its name in the History dock), or `None`: set
    /// directly, not on the undo history.
    pub action: Option<String>,
    pub undoable: bool,
    /// Why the batch cannot be undone, when it cannot.
    pub undo_hint: Option<String>,
}

/// The execution of a batch under the policy the server sent.
pub fn execution(sets: &[PropertySet], undo: UndoPolicy) -> Execution {
    match undo {
        UndoPolicy::OneAction => Execution {
            action: Some(action_name(sets)),
            undoable: true,
            undo_hint: None,
        },
        UndoPolicy::Bypass => Execution {
            action: None,
            undoable: false,
            undo_hint: Some(format!(
                "More than {UNDO_BATCH_LIMIT} nodes: applied without the editor's undo history."
            )),
        },
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

    /// The add-on executes the policy it is sent, whatever the batch's size: the rule
    /// is the server's (tools/editor.rs `batch_undo`).
    #[test]
    fn the_sent_policy_is_executed_not_recomputed() {
        let big = sets(30, 1);
        let e = execution(&big, UndoPolicy::OneAction);
        assert!(e.undoable);
        assert_eq!(
            e.action.as_deref(),
            Some("MCP: batch of 30 set(s) on 30 node(s)")
        );
        assert_eq!(e.undo_hint, None);
        let small = sets(1, 2);
        let e = execution(&small, UndoPolicy::Bypass);
        assert!(!e.undoable);
        assert_eq!(e.action, None, "bypass: no undo action");
        assert!(
            e.undo_hint
                .unwrap()
                .contains("without the editor's undo history")
        );
        assert_eq!(
            action_name(&sets(2, 2)),
            "MCP: batch of 4 set(s) on 2 node(s)"
        );
    }
}
