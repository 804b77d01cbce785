#!/usr/bin/env python3
"""Cycles between a crate's modules, from cargo-modules' graph (scripts/check-layers.sh).

    module_cycles.py GRAPH.dot SRC_DIR CRATE_NAME [--print]

GRAPH.dot is `cargo modules dependencies --no-fns --no-types --no-traits --layout dot`:
every item folded into its module, "uses" edges between modules. To those, the
`crate::a::b` paths written out in the crate's source (a call in a function body, which
cargo-modules does not see) are added, test modules left out.

A module using what one of its ancestors defines (`super::x`, `crate::x` from below) is
not an edge: a parent and its children are one room. Every other edge counts, and the
graph must have no cycle at any depth: among the top-level modules (`tools`, `planes`,
...), among the modules two deep (`tools::scene`, `planes::process`), and so on down to
the full paths. Each cycle is printed with its shortest loop and, for each step, where
it comes from. Exit status 1 when there is a cycle.
"""

import collections
import os
import re
import sys

EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label="(uses|owns)"')
NODE = re.compile(r'^\s*"([^"]+)" \[label=')
PATH = re.compile(r"(?<![\w$])crate((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def read_graph(dot, crate):
    nodes, edges = set(), collections.defaultdict(set)
    for line in open(dot, encoding="utf-8"):
        m = EDGE.match(line)
        if m:
            a, b, kind = m.groups()
            nodes.update((a, b))
            if kind == "uses":
                edges[(a, b)].add("cargo-modules: a `use` or a signature")
            continue
        m = NODE.match(line)
        if m:
            nodes.add(m.group(1))
    return {n for n in nodes if n == crate or n.startswith(crate + "::")}, edges


def source_paths(src, crate, nodes, edges):
    """Edges from `crate::...` paths written in each module's own file."""
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib"):
                rel = rel[:-1]
            module = "::".join([crate] + rel)
            if module not in nodes:  # main.rs, test-only files
                continue
            skip_next = False
            for n, line in enumerate(open(os.path.join(dirpath, f), encoding="utf-8"), 1):
                code = line.split("//", 1)[0]
                if skip_next:
                    skip_next = False
                    if re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code):
                        break  # the test module, by convention the file's last item
                    continue
                if code.strip().startswith("#[cfg(test)]"):
                    skip_next = True
                    continue
                for m in PATH.finditer(code):
                    segs = m.group(1).split("::")[1:]
                    target = None
                    for i in range(len(segs), 0, -1):
                        cand = "::".join([crate] + segs[:i])
                        if cand in nodes:
                            target = cand
                            break
                    if target and target != module:
                        where = os.path.relpath(os.path.join(dirpath, f), os.path.dirname(src))
                        edges[(module, target)].add(f"{where}:{n}: crate{m.group(1)}")


def is_within(a, b):
    """a is b or lies inside b."""
    return a == b or a.startswith(b + "::")


def collapse(edges, crate, depth):
    g, why = collections.defaultdict(set), collections.defaultdict(set)
    cut = lambda m: "::".join(m.split("::")[: depth + 1])
    for (a, b), how in edges.items():
        A, B = cut(a), cut(b)
        if is_within(A, B):  # same module, or an ancestor's own items
            continue
        g[A].add(B)
        why[(A, B)].update(f"{a} -> {b} ({h})" for h in how)
    return g, why


def strongly_connected(g):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(g) | {w for ws in g.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def shortest_loop(g, comp):
    inside, best = set(comp), None
    for start in comp:
        prev, queue, last = {start: None}, collections.deque([start]), None
        while queue and last is None:
            v = queue.popleft()
            for w in sorted(g.get(v, ())):
                if w == start:
                    last = v
                    break
                if w in inside and w not in prev:
                    prev[w] = v
                    queue.append(w)
        if last is not None:
            path = [last]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            path.reverse()
            if best is None or len(path) < len(best):
                best = path
    return best


def layers(g):
    """Top-level modules by level: each imports only from levels below it."""
    nodes = set(g) | {w for ws in g.values() for w in ws}
    level = {}

    def height(v, seen=()):
        if v not in level:
            level[v] = 1 + max((height(w) for w in g.get(v, ())), default=-1)
        return level[v]

    for v in nodes:
        height(v)
    by = collections.defaultdict(list)
    for v, h in level.items():
        by[h].append(v)
    return [sorted(by[h]) for h in sorted(by, reverse=True)]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dot, src, crate = args
    nodes, edges = read_graph(dot, crate)
    source_paths(src, crate, nodes, edges)
    short = lambda m: m[len(crate) + 2 :] if m != crate else "crate"
    deepest = max(m.count("::") for m in nodes)
    seen, cycles = set(), 0
    for depth in range(1, deepest + 1):
        g, why = collapse(edges, crate, depth)
        for comp in strongly_connected(g):
            key = tuple(comp)
            if key in seen:
                continue
            seen.add(key)
            cycles += 1
            loop = shortest_loop(g, comp)
            print(f"cycle (depth {depth}) among {', '.join(map(short, comp))}:")
            print("    " + " -> ".join(map(short, loop + [loop[0]])))
            for a, b in zip(loop, loop[1:] + loop[:1]):
                reasons = sorted(why[(a, b)])
                print(f"    {short(a)} -> {short(b)}, e.g.:")
                for r in reasons[:3]:
                    print("        " + r.replace(crate + "::", ""))
                if len(reasons) > 3:
                    print(f"        ... and {len(reasons) - 3} more")
    top, _ = collapse(edges, crate, 1)
    count = sum(len(v) for v in collapse(edges, crate, deepest)[0].values())
    if "--print" in sys.argv and not cycles:
        print("layers, top first (each imports only from the layers below it):")
        for i, level in enumerate(layers(top)):
            print(f"    {i + 1}. {' '.join(map(short, level))}")
    verdict = f"{cycles} cycle(s)" if cycles else "no cycle"
    print(f"module graph of {crate}: {len(nodes)} modules, {count} edges between them, {verdict}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
