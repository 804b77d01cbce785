//! The project's reference graph, as pure data: which file refers to which, and
//! the questions asked of it (transitive dependencies and dependents, cycles,
//! what the roots reach). No file system here; the caller builds the edges from
//! parsed scenes, resources, scripts and `project.godot`.
//!
//! Nodes are `res://` path strings. Every query's output is sorted, so answers
//! are stable across runs and can be paged by offset.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A directed graph of `res://` paths: `a -> b` when `a` refers to `b`.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    out: BTreeMap<String, BTreeSet<String>>,
    inc: BTreeMap<String, BTreeSet<String>>,
}

/// One file reached by a walk: its path, its distance from the start, and the file
/// one step closer to the start through which it was reached (the first found, in
/// path order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    pub path: String,
    pub depth: u32,
    pub via: String,
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record that `from` refers to `to`.
    pub fn add_edge(&mut self, from: &str, to: &str) {
        self.out
            .entry(from.to_string())
            .or_default()
            .insert(to.to_string());
        self.inc
            .entry(to.to_string())
            .or_default()
            .insert(from.to_string());
    }

    /// What `path` refers to directly.
    pub fn direct(&self, path: &str) -> impl Iterator<Item = &str> {
        self.out.get(path).into_iter().flatten().map(String::as_str)
    }

    /// Everything `start` depends on, transitively (breadth first, nearest first).
    pub fn dependencies(&self, start: &str, max_depth: u32) -> Vec<Reached> {
        walk(&self.out, start, max_depth)
    }

    /// Everything that depends on `start`, transitively (nearest first).
    pub fn dependents(&self, start: &str, max_depth: u32) -> Vec<Reached> {
        walk(&self.inc, start, max_depth)
    }

    /// Every path reachable from `roots` (the roots included).
    pub fn reachable<'a>(&self, roots: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut queue: VecDeque<String> = VecDeque::new();
        for r in roots {
            if seen.insert(r.to_string()) {
                queue.push_back(r.to_string());
            }
        }
        while let Some(p) = queue.pop_front() {
            for next in self.out.get(&p).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
        seen
    }

    /// Every cycle, as one strongly connected component each (a file that refers to
    /// itself is a cycle of one). Each cycle lists its paths in order around one
    /// loop through it, starting at its smallest path; cycles are sorted.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = tarjan(&self.out)
            .into_iter()
            .filter(|c| c.len() > 1 || c.first().is_some_and(|p| self.direct(p).any(|q| q == p)))
            .map(|c| self.order_cycle(c))
            .collect();
        out.sort();
        out
    }

    /// Order a component's members along a loop: from the smallest path, follow the
    /// smallest unvisited successor inside the component; members a simple path does
    /// not reach are appended in order (a component need not be one simple loop).
    fn order_cycle(&self, mut members: Vec<String>) -> Vec<String> {
        members.sort();
        let set: BTreeSet<&str> = members.iter().map(String::as_str).collect();
        let mut order: Vec<String> = Vec::with_capacity(members.len());
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut cur = members[0].as_str();
        loop {
            seen.insert(cur);
            order.push(cur.to_string());
            match self
                .direct(cur)
                .find(|n| set.contains(n) && !seen.contains(n))
            {
                Some(n) => cur = n,
                None => break,
            }
        }
        for m in &members {
            if !seen.contains(m.as_str()) {
                order.push(m.clone());
            }
        }
        order
    }
}

fn walk(adj: &BTreeMap<String, BTreeSet<String>>, start: &str, max_depth: u32) -> Vec<Reached> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    seen.insert(start);
    let mut queue: VecDeque<(&str, u32)> = VecDeque::new();
    queue.push_back((start, 0));
    let mut out = Vec::new();
    while let Some((p, d)) = queue.pop_front() {
        if d >= max_depth {
            continue;
        }
        for next in adj.get(p).into_iter().flatten() {
            if seen.insert(next.as_str()) {
                out.push(Reached {
                    path: next.clone(),
                    depth: d + 1,
                    via: p.to_string(),
                });
                queue.push_back((next.as_str(), d + 1));
            }
        }
    }
    out
}

/// Tarjan's strongly connected components, iterative (a deep reference chain must
/// not overflow the stack).
fn tarjan(adj: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&str> = adj
        .iter()
        .flat_map(|(k, v)| std::iter::once(k.as_str()).chain(v.iter().map(String::as_str)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let idx: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            adj.get(*n)
                .into_iter()
                .flatten()
                .map(|m| idx[m.as_str()])
                .collect()
        })
        .collect();
    let n = nodes.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0usize;
    let mut comps = Vec::new();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, position in its successor list)
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            if let Some(&w) = succ[v].get(*pos) {
                *pos += 1;
                if index[w] == usize::MAX {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(nodes[w].to_string());
                        if w == v {
                            break;
                        }
                    }
                    comps.push(comp);
                }
            }
        }
    }
    comps
}

/// A `res://` or `uid://` string literal in a script, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub text: String,
    pub line: u32,
}

/// The `"res://…"` and `"uid://…"` string literals of a script's text (GDScript or
/// C#): what `preload`, `load` and exported defaults name. Comments are skipped
/// (`#` and `//` to the end of the line, outside strings). Single and double
/// quotes both count; a literal does not span lines.
pub fn resource_literals(src: &str) -> Vec<Literal> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            let c = bytes[j];
            if c == b'#' || (c == b'/' && bytes.get(j + 1) == Some(&b'/')) {
                break;
            }
            if c == b'"' || c == b'\'' {
                let start = j + 1;
                let mut k = start;
                while k < bytes.len() && bytes[k] != c {
                    if bytes[k] == b'\\' {
                        k += 1;
                    }
                    k += 1;
                }
                let body = &line[start..k.min(line.len())];
                if body.starts_with("res://") || body.starts_with("uid://") {
                    out.push(Literal {
                        text: body.to_string(),
                        line: i as u32 + 1,
                    });
                }
                j = k + 1;
            } else {
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.add_edge(a, b);
        }
        g
    }

    #[test]
    fn dependencies_are_transitive_and_nearest_first() {
        let g = graph(&[("main", "player"), ("player", "stats"), ("stats", "script")]);
        let d = g.dependencies("main", u32::MAX);
        let got: Vec<(&str, u32, &str)> = d
            .iter()
            .map(|r| (r.path.as_str(), r.depth, r.via.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("player", 1, "main"),
                ("stats", 2, "player"),
                ("script", 3, "stats")
            ]
        );
        assert_eq!(g.dependencies("main", 1).len(), 1);
        let up: Vec<String> = g
            .dependents("script", u32::MAX)
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(up, ["stats", "player", "main"]);
    }

    #[test]
    fn cycles_are_found_and_ordered_around_the_loop() {
        let g = graph(&[
            ("c", "a"),
            ("a", "b"),
            ("b", "c"),
            ("b", "d"),
            ("self", "self"),
            ("x", "y"),
        ]);
        assert_eq!(
            g.cycles(),
            vec![
                vec!["a".to_string(), "b".into(), "c".into()],
                vec!["self".to_string()]
            ]
        );
        assert!(graph(&[("a", "b"), ("b", "c")]).cycles().is_empty());
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let mut g = Graph::new();
        for i in 0..100_000 {
            g.add_edge(&format!("n{i}"), &format!("n{}", i + 1));
        }
        g.add_edge("n100000", "n0");
        let c = g.cycles();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].len(), 100_001);
    }

    #[test]
    fn reachable_includes_roots() {
        let g = graph(&[("main", "player"), ("orphan", "player")]);
        let r = g.reachable(["main", "autoload"]);
        assert_eq!(
            r.into_iter().collect::<Vec<_>>(),
            ["autoload", "main", "player"]
        );
    }

    #[test]
    fn literals_skip_comments_and_other_strings() {
        let src = "const A = preload(\"res://a.tscn\") # \"res://commented.tscn\"\n\
                   var b = load('uid://abc')\n\
                   var s = \"hello\" // \"res://cs_comment\"\n\
                   print(\"say \\\"res://no\\\"\")\n";
        let lits = resource_literals(src);
        assert_eq!(
            lits,
            [
                Literal {
                    text: "res://a.tscn".into(),
                    line: 1
                },
                Literal {
                    text: "uid://abc".into(),
                    line: 2
                },
            ]
        );
    }
}
