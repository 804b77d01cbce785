//! The plan a `scene.steps` check builds: the created nodes and the do/undo operations of
//! the one action, in step order. The step kinds (`steps.rs`, `physics.rs`, `tilemap.rs`)
//! all add to it.

use std::collections::HashMap;

use godot::classes::{Node, Object};
use godot::prelude::*;
use godot_mcp_editor_core::command::NodeRef;
use godot_mcp_protocol::BridgeError;

use super::ctx::{failed, find, obj, owned};

/// One do/undo pair of the action.
pub(crate) enum Op {
    /// Add a created node under a node of the scene (undo: remove it).
    AddChild { parent: Gd<Node>, child: Gd<Node> },
    Prop {
        target: Gd<Object>,
        property: String,
        new: Variant,
        old: Variant,
    },
    Call {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
        undo_method: &'static str,
        undo_args: Vec<Variant>,
    },
    /// A call with no undo of its own (a cell write: [`Op::Restore`] undoes them all).
    Do {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
    },
    /// Undo only: a call.
    UndoCall {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
    },
    /// Undo only: put a whole stored property back (a layer's cells, in their saved
    /// order — cell by cell would re-add an erased cell at the end of the map and save
    /// the same cells in another order).
    Restore {
        target: Gd<Object>,
        property: &'static str,
        old: Variant,
    },
}

/// What the check builds: the created nodes (by step) and the operations, in step order.
pub(crate) struct Prepared {
    pub(crate) created: Vec<Option<Gd<Node>>>,
    /// Created nodes whose parent is a node of the scene (they are added by the action).
    pub(crate) tops: Vec<Gd<Node>>,
    /// Where each created node goes (its parent is set only when the action runs).
    pub(crate) parent_of: HashMap<InstanceId, Gd<Node>>,
    pub(crate) ops: Vec<Op>,
    /// Property values as the earlier steps leave them (for the next step's undo).
    pub(crate) props: HashMap<(InstanceId, String), Variant>,
    /// Nodes whose cells the action already restores on undo.
    pub(crate) restored: std::collections::HashSet<InstanceId>,
    /// TileSets this action makes (edited directly: they reach the scene only with it).
    pub(crate) fresh: std::collections::HashSet<InstanceId>,
    /// Physics layers / terrain sets earlier steps add to a TileSet, by kind.
    pub(crate) layers: HashMap<(InstanceId, &'static str), i32>,
    /// The property sets on nodes of the scene, read back once the action ran (the
    /// last set of a property is what it must hold).
    pub(crate) asked: Vec<(Gd<Node>, String, Variant)>,
}

impl Prepared {
    pub(crate) fn node(
        &self,
        root: &Gd<Node>,
        r: &NodeRef,
    ) -> Result<(Gd<Node>, bool), BridgeError> {
        match r {
            NodeRef::Step(i) => self
                .created
                .get(*i)
                .cloned()
                .flatten()
                .map(|n| (n, true))
                .ok_or_else(|| failed(format!("${i} is not a node this action creates"))),
            NodeRef::Path(p) => {
                let n = find(root, p)?;
                if !owned(root, &n) {
                    return Err(failed(format!(
                        "{p} belongs to an instanced sub-scene: open that scene to edit it"
                    )));
                }
                Ok((n, false))
            }
        }
    }

    pub(crate) fn parent(&self, n: &Gd<Node>) -> Option<Gd<Node>> {
        self.parent_of
            .get(&n.instance_id())
            .cloned()
            .or_else(|| n.get_parent())
    }

    /// Set `property` on `n`: directly on a created node, as a do/undo pair otherwise.
    pub(crate) fn set(&mut self, n: &Gd<Node>, created: bool, property: &str, v: Variant) {
        if created {
            n.clone().set(property, &v);
            return;
        }
        let key = (n.instance_id(), property.to_string());
        let old = self
            .props
            .get(&key)
            .cloned()
            .unwrap_or_else(|| n.get(property));
        self.props.insert(key, v.clone());
        self.ops.push(Op::Prop {
            target: obj(n),
            property: property.into(),
            new: v,
            old,
        });
    }
}

impl Prepared {
    /// `set_indexed` of `base:sub` (a property of a sub-resource the node holds).
    pub(crate) fn set_indexed(&mut self, n: &Gd<Node>, created: bool, path: &str, v: Variant) {
        let np = NodePath::from(path);
        if created {
            n.clone().set_indexed(&np, &v);
            return;
        }
        let key = (n.instance_id(), path.to_string());
        let old = self
            .props
            .get(&key)
            .cloned()
            .unwrap_or_else(|| n.get_indexed(&np));
        self.props.insert(key, v.clone());
        self.ops.push(Op::Call {
            target: obj(n),
            method: "set_indexed",
            args: vec![np.to_variant(), v],
            undo_method: "set_indexed",
            undo_args: vec![np.to_variant(), old],
        });
    }
}
