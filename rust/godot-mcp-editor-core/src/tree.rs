//! The compact form of a live scene-tree read.
//!
//! Nodes are listed in pre-order (a parent before its children, children in order) as
//! three parallel arrays: `names`, `types` (indices into a `type_names` table, so a type
//! name is sent once) and `depths` (the root is 0). The path of every node follows from
//! the order and the depths, so no path is repeated; [`paths`] rebuilds them. A page is a
//! contiguous slice of that order (`offset`, `limit`) and carries `next_offset`.
//!
//! A 10,000-node tree costs about 17 bytes a node (measured by `benches/compact_tree.rs`),
//! within the 200 KB budget.

use serde::{Deserialize, Serialize};

/// One node as the add-on walks the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub name: String,
    pub type_name: String,
    pub depth: u32,
}

/// A page of the tree in compact form; this is the JSON the bridge carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactTree {
    /// The scene file, `res://…` (empty for a never-saved scene).
    pub scene: String,
    /// Nodes in the whole tree.
    pub node_count: usize,
    /// Index of this page's first node.
    pub offset: usize,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub type_names: Vec<String>,
    pub names: Vec<String>,
    pub types: Vec<u32>,
    pub depths: Vec<u32>,
}

/// Build one page from the full pre-order list.
pub fn page(scene: &str, nodes: &[TreeNode], offset: usize, limit: usize) -> CompactTree {
    let end = offset.saturating_add(limit).min(nodes.len());
    let slice = nodes.get(offset.min(nodes.len())..end).unwrap_or(&[]);
    let mut type_names: Vec<String> = Vec::new();
    let mut types = Vec::with_capacity(slice.len());
    for n in slice {
        let idx = match type_names.iter().position(|t| *t == n.type_name) {
            Some(i) => i,
            None => {
                type_names.push(n.type_name.clone());
                type_names.len() - 1
            }
        };
        types.push(idx as u32);
    }
    CompactTree {
        scene: scene.to_string(),
        node_count: nodes.len(),
        offset,
        next_offset: (end < nodes.len()).then_some(end),
        type_names,
        names: slice.iter().map(|n| n.name.clone()).collect(),
        types,
        depths: slice.iter().map(|n| n.depth).collect(),
    }
}

/// The node paths of a page, relative to the scene root (the root is `.`). A page that
/// starts mid-tree needs the path of its first node's parent chain: pass the names of the
/// ancestors above `offset` (from the previous page), or an empty slice for the first page.
pub fn paths(tree: &CompactTree, ancestors: &[String]) -> Vec<String> {
    let mut stack: Vec<String> = ancestors.to_vec();
    let mut out = Vec::with_capacity(tree.names.len());
    for (name, depth) in tree.names.iter().zip(&tree.depths) {
        let depth = *depth as usize;
        stack.truncate(depth);
        stack.push(name.clone());
        out.push(if depth == 0 {
            ".".into()
        } else {
            stack[1..].join("/")
        });
    }
    out
}

/// A generated tree for tests and the size benchmark: a root with `n - 1` descendants in
/// a realistic shape (groups of 10 under containers, names like `Enemy_1234`).
pub fn generated(n: usize) -> Vec<TreeNode> {
    let kinds = [
        "Sprite2D",
        "CollisionShape2D",
        "Area2D",
        "Label",
        "Node2D",
        "AnimationPlayer",
    ];
    let mut out = Vec::with_capacity(n);
    out.push(TreeNode {
        name: "Level".into(),
        type_name: "Node2D".into(),
        depth: 0,
    });
    let mut i = 1;
    while i < n {
        out.push(TreeNode {
            name: format!("Group_{i}"),
            type_name: "Node2D".into(),
            depth: 1,
        });
        i += 1;
        for k in 0..10 {
            if i >= n {
                break;
            }
            out.push(TreeNode {
                name: format!("Enemy_{i}"),
                type_name: kinds[k % kinds.len()].into(),
                depth: 2,
            });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_from_order_and_depth() {
        let nodes = vec![
            TreeNode {
                name: "Root".into(),
                type_name: "Node2D".into(),
                depth: 0,
            },
            TreeNode {
                name: "A".into(),
                type_name: "Node2D".into(),
                depth: 1,
            },
            TreeNode {
                name: "B".into(),
                type_name: "Sprite2D".into(),
                depth: 2,
            },
            TreeNode {
                name: "C".into(),
                type_name: "Node2D".into(),
                depth: 1,
            },
        ];
        let t = page("res://m.tscn", &nodes, 0, 10);
        assert_eq!(t.type_names, ["Node2D", "Sprite2D"]);
        assert_eq!(t.types, [0, 0, 1, 0]);
        assert_eq!(paths(&t, &[]), [".", "A", "A/B", "C"]);
        let p2 = page("res://m.tscn", &nodes, 2, 10);
        assert_eq!(p2.next_offset, None);
        assert_eq!(paths(&p2, &["Root".into(), "A".into()]), ["A/B", "C"]);
        let p1 = page("res://m.tscn", &nodes, 0, 2);
        assert_eq!(p1.next_offset, Some(2));
        assert_eq!(page("", &nodes, 99, 5).names.len(), 0);
    }

    #[test]
    fn ten_thousand_nodes_fit_in_200_kb() {
        let nodes = generated(10_000);
        let json = serde_json::to_string(&page("res://big.tscn", &nodes, 0, 10_000)).unwrap();
        assert!(json.len() <= 200 * 1024, "{} bytes", json.len());
    }
}
