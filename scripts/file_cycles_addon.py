#!/usr/bin/env python3
"""Import circles between the files of one crate.

    file_cycles_addon.py SRC_DIR [SRC_DIR ...]

For each crate source directory, every `.rs` file is one node (`lib.rs` the crate root,
`a.rs` or `a/mod.rs` the module `a`, `a/b.rs` the module `a::b`). A file points at another
when its code (comments and `#[cfg(test)] mod ... { }` blocks left out) names a path into
it: `crate::a::b`, `super::x`, `self::x`, or `x::` for a module `x` the file declares with
`mod x;` (a parent calling its child counts: the child calling back makes a circle). Grouped
paths (`crate::{a, b::c}`) are expanded. A path names the deepest file module it reaches;
an item of a module (`crate::a::f`) names the file of `a`.

Prints every strongly connected component of more than one file, with its edges and the
line each edge comes from. Exit status 1 when there is one, 0 when there is none.
"""

import collections
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(src, path):
    rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if rel == ["lib"] or rel == ["main"]:
        return ()
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


def strip(text):
    """The code of a file: comments blanked (line numbers kept), test modules removed."""
    out, i, n = [], 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            in_str = True
        out.append(c)
        i += 1
    code = "".join(out)
    # `#[cfg(test)] mod name { ... }`: blank through the matching brace.
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+" + IDENT + r"\s*\{", code))):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        block = code[m.start() : j + 1]
        code = code[: m.start()] + "\n" * block.count("\n") + code[j + 1 :]
    return code


def expand(code, start):
    """The paths of a grouped path whose `{` is at `start`: `{a, b::c, d::{e, f}}`."""
    depth, j = 0, start
    while j < len(code):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    inner = code[start + 1 : j]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    paths = []
    for p in parts:
        p = p.strip()
        if not p:
            continue
        head = re.match(r"(" + IDENT + r"(?:\s*::\s*" + IDENT + r")*)", p)
        if not head:
            continue
        segs = [s.strip() for s in head.group(1).split("::")]
        rest = p[head.end() :].lstrip()
        if rest.startswith("::") and "{" in rest:
            k = p.index("{", head.end())
            for sub in expand(p, k):
                paths.append(segs + sub)
        else:
            paths.append(segs)
    return paths


def references(code, module, children):
    """(segments from the crate root, line) for every module path the code names."""
    found = []
    line_at = lambda pos: code.count("\n", 0, pos) + 1
    starts = r"(?<![\w:])(crate|super(?:\s*::\s*super)*|self" + (
        "|" + "|".join(map(re.escape, children)) if children else ""
    ) + r")\s*::\s*"
    for m in re.finditer(starts, code):
        head = m.group(1)
        if head == "crate":
            base = []
        elif head.startswith("super"):
            ups = head.count("super")
            base = list(module[: len(module) - ups]) if ups <= len(module) else []
        elif head == "self":
            base = list(module)
        else:
            base = list(module) + [head]
        rest = code[m.end() :]
        if rest.startswith("{"):
            for segs in expand(code, m.end()):
                found.append((base + segs, line_at(m.start())))
        else:
            seg = re.match(IDENT + r"(?:\s*::\s*" + IDENT + r")*", rest)
            segs = [s.strip() for s in seg.group(0).split("::")] if seg else []
            found.append((base + segs, line_at(m.start())))
    return found


def resolve(segs, modules):
    best = ()
    for k in range(len(segs) + 1):
        cand = tuple(segs[:k])
        if cand in modules:
            best = cand
    return best


def crate_graph(src):
    files = {}
    for dirpath, _, names in os.walk(src):
        for f in sorted(names):
            if f.endswith(".rs"):
                p = os.path.join(dirpath, f)
                files[module_of(src, p)] = p
    edges = collections.defaultdict(list)
    for module, path in files.items():
        code = strip(open(path, encoding="utf-8").read())
        children = [
            c for c in re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", code, re.M)
            if module + (c,) in files
        ]
        for segs, line in references(code, module, children):
            target = resolve(segs, files)
            if target != module:
                edges[(module, target)].append(line)
    return files, edges


def sccs(nodes, edges):
    succ = collections.defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main(dirs):
    bad = 0
    for src in dirs:
        files, edges = crate_graph(src)
        rel = lambda m: os.path.relpath(files[m], src)
        comps = sccs(files, edges)
        print(f"{src}: {len(files)} files, {len(comps)} import circle(s)")
        for comp in comps:
            bad += 1
            members = set(comp)
            print("  circle: " + ", ".join(rel(m) for m in comp))
            for (a, b), lines in sorted(edges.items()):
                if a in members and b in members:
                    where = ",".join(str(x) for x in sorted(set(lines))[:4])
                    print(f"    {rel(a)} -> {rel(b)}  (line {where})")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
