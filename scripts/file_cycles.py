#!/usr/bin/env python3
"""Import circles between the source files of one crate.

    file_cycles.py SRC_DIR [--tests] [--edges]

Reads every .rs file under SRC_DIR (the crate's `src`; `src/bin/` is other crates and is
left out) and the paths each one writes: `use` trees (`use crate::a::{b, c::D}`,
`use super::x`, `use self::m::Y`, and a child module's plain name), and every
`crate::`, `super::` or `self::` path in code (a call in a function body too). Each path
is resolved to the file that holds the item: the longest module prefix that is a file
(`a.rs`, `a/mod.rs`), then through that module's own `pub use` re-exports (so
`crate::Journal`, re-exported by lib.rs, is an edge to `journal.rs`, not to lib.rs).

Files count, not modules: a parent file and its child file that import each other are a
circle. Declaring a module (`mod x;`) is not an import. Comments and string literals are
left out, and so is test code (an inline `#[cfg(test)] mod` and a file declared with
`#[cfg(test)]`) unless --tests is given.

Prints every strongly connected component of more than one file, with one written path
for each edge inside it, and exits 1 when there is one; 0 (and "no circle") otherwise.
--edges prints the whole file graph as well.
"""

import collections
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
INLINE_PATH = re.compile(rf"(?<![\w$:])((?:crate|super|self)(?:::(?:{IDENT}|\*))+)")


def strip(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (i == 0 or not re.match(r"\w", text[i - 1])):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])):
            out.append(" " * m.end())
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel):
    """Module path (a tuple) of a file, from its path relative to src."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main") and (parts[-1] != "main" or len(parts) == 1):
        parts = parts[:-1]
    return tuple(parts)


def expand_use(tree):
    """`a::{b, c::{d, e as f}}` -> [(['a','b'], 'b'), (['a','c','d'], 'd'), (['a','c','e'], 'f')]."""
    tree = re.sub(r"\s*(::|[{},])\s*", r"\1", re.sub(r"\s+", " ", tree.strip()))
    out = []

    def walk(prefix, s):
        # split s at top-level commas
        depth, start, items = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(s[start:k])
                start = k + 1
        items.append(s[start:])
        for item in items:
            if not item:
                continue
            brace = item.find("{")
            if brace >= 0:
                head = item[:brace].rstrip(":")
                segs = [x for x in head.split("::") if x]
                walk(prefix + segs, item[brace + 1 : item.rfind("}")])
                continue
            alias = None
            if " as " in item:
                item, alias = item.split(" as ", 1)
            segs = [x for x in item.split("::") if x]
            if segs == ["self"]:
                out.append((prefix, prefix[-1] if prefix else None))
                continue
            out.append((prefix + segs, alias or segs[-1]))

    walk([], tree)
    return out


USE = re.compile(r"(?<![\w:])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);", re.S)
MOD_DECL = re.compile(rf"(?<![\w:])mod\s+({IDENT})\s*([;{{])")
CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])")


def matching_brace(text, open_at):
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


class Crate:
    def __init__(self, src, tests):
        self.src = src
        self.files = {}  # module tuple -> relative file path
        self.code = {}  # relative path -> stripped text
        for dirpath, dirs, names in os.walk(src):
            rel_dir = os.path.relpath(dirpath, src)
            if rel_dir == "bin" or rel_dir.startswith("bin" + os.sep):
                dirs[:] = []
                continue
            for name in sorted(names):
                if name.endswith(".rs"):
                    rel = os.path.normpath(os.path.join(rel_dir, name))
                    self.files[module_of(rel)] = rel
                    with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                        self.code[rel] = strip(fh.read())
        self.test_only = set()
        if not tests:
            for mod, rel in list(self.files.items()):
                text = self.code[rel]
                for m in CFG_TEST.finditer(text):
                    if m.group(2) == ";":
                        self.test_only.add(mod + (m.group(1),))
                    else:  # blank the inline test module
                        end = matching_brace(text, m.end() - 1)
                        text = text[: m.start()] + re.sub(r"[^\n]", " ", text[m.start() : end + 1]) + text[end + 1 :]
                self.code[rel] = text
            # a file inside a test-only module is test code too
            for mod in list(self.files):
                if any(mod[: len(t)] == t for t in self.test_only):
                    del self.files[mod]
        self.modules = set()  # every module, inline ones too
        self.inline = {}  # (rel, offset) -> module tuple, for each position's module
        self.reexports = collections.defaultdict(dict)  # module -> name -> absolute segs
        self.uses = []  # (from rel, line, module, segs, text)
        for mod, rel in self.files.items():
            self.modules.add(mod)
            self.scan(mod, rel)

    def scan(self, mod, rel):
        text = self.code[rel]
        spans = []  # (start, end, module) of inline modules, innermost last

        def collect(start, end, base):
            for m in MOD_DECL.finditer(text, start, end):
                if any(s <= m.start() < e for s, e, _ in spans if s > start):
                    continue
                if m.group(2) == "{":
                    close = matching_brace(text, m.end() - 1)
                    child = base + (m.group(1),)
                    self.modules.add(child)
                    spans.append((m.end(), close, child))
                    collect(m.end(), close, child)

        collect(0, len(text), mod)

        def module_at(pos):
            best = mod
            for s, e, child in spans:
                if s <= pos < e and len(child) > len(best):
                    best = child
            return best

        line_at = lambda pos: text.count("\n", 0, pos) + 1
        used = []
        for m in USE.finditer(text):
            here = module_at(m.start())
            for segs, name in expand_use(m.group(2)):
                used.append((m.start(), m.end()))
                self.uses.append((rel, line_at(m.start()), here, segs, "use " + "::".join(segs)))
                if m.group(1) and name and name != "*":
                    self.reexports[here][name] = (here, segs)
        for m in INLINE_PATH.finditer(text):
            if any(s <= m.start() < e for s, e in used):
                continue
            segs = m.group(1).split("::")
            self.uses.append((rel, line_at(m.start()), module_at(m.start()), segs, m.group(1)))

    def absolute(self, here, segs):
        """Absolute module-relative segments of a written path, or None (another crate)."""
        segs = list(segs)
        if not segs:
            return None
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] in ("self", "super"):
            base = list(here)
            while segs and segs[0] in ("self", "super"):
                if segs.pop(0) == "super":
                    if not base:
                        return None
                    base.pop()
            return base + segs
        if tuple(here) + (segs[0],) in self.modules:
            return list(here) + segs
        return None  # an extern crate, std, or a name in scope

    def resolve(self, here, segs, depth=0):
        """The file holding what a path names, or None."""
        path = self.absolute(here, segs)
        if path is None or depth > 20:
            return None
        for k in range(len(path), -1, -1):
            mod = tuple(path[:k])
            if mod in self.modules:
                rest = path[k:]
                if rest and rest[0] in self.reexports.get(mod, {}):
                    at, target = self.reexports[mod][rest[0]]
                    again = self.resolve(at, list(target) + rest[1:], depth + 1)
                    if again:
                        return again
                while mod not in self.files and mod:
                    mod = mod[:-1]
                return self.files.get(mod)
        return None

    def graph(self):
        edges = collections.defaultdict(list)  # (a, b) -> [(line, text)]
        for rel, line, here, segs, text in self.uses:
            if not any(self.files.get(m) == rel for m in self.files):
                continue  # a test-only file
            target = self.resolve(here, segs)
            if target and target != rel:
                edges[(rel, target)].append((line, text))
        return edges


def components(nodes, succ):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ.get(v, ())):
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = args[0]
    crate = Crate(src, "--tests" in sys.argv)
    edges = crate.graph()
    succ = collections.defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    nodes = set(crate.files.values())
    if "--edges" in sys.argv:
        for a in sorted(nodes):
            for b in sorted(succ.get(a, ())):
                print(f"{a} -> {b}")
    comps = components(nodes, succ)
    for comp in comps:
        print(f"circle of {len(comp)} files: {' '.join(comp)}")
        inside = set(comp)
        for a in comp:
            for b in sorted(succ[a] & inside):
                line, text = edges[(a, b)][0]
                more = len(edges[(a, b)]) - 1
                extra = f" (+{more} more)" if more else ""
                print(f"    {a} -> {b}   {a}:{line} {text}{extra}")
    print(
        f"{src}: {len(nodes)} files, {len(edges)} file edges, "
        + (f"{len(comps)} circle(s)" if comps else "no circle")
    )
    return 1 if comps else 0


if __name__ == "__main__":
    sys.exit(main())
