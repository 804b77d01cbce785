#!/usr/bin/env python3
"""Import circles between the files of a crate (issue #43: files, not only modules).

    file_cycles.py SRC_DIR [--print]
    file_cycles.py --allow FILE SRC_DIR...

SRC_DIR is a crate's `src` (e.g. rust/godot-mcp-formats/src). Every `.rs` file under it is a
node (the root is `lib.rs`, or `main.rs` in a crate without one; a library crate's
`main.rs` and `bin/` are other crates and are left out). A file has an edge to another when its non-test code names something that the other
file defines:

- a path written out anywhere in the code: `crate::a::b`, `super::x`, `self::c::d`, or
  `child::x` where `child` is a module the file declares (`mod child;`);
- the paths of each `use` item, braces expanded (`use crate::{a::X, b::{Y, Z}}`).

A path is resolved along the module tree (`a.rs` or `a/mod.rs` is `crate::a`, `a/b.rs`
is `crate::a::b`, `lib.rs` is `crate`) to the deepest module file it names. When the next
segment is an item that file only re-exports (`pub use x::Item`, or `pub use x::*` with
`x` defining it), the path follows the re-export to the file that defines the item, so a
facade (`lib.rs`, a `mod.rs`) does not join its users to its children. `macro_export`
macros (`crate::m!`) live at the crate root.

Not edges: `mod x;` declarations and `pub use` re-exports themselves (a facade lists, it
does not use), `#[cfg(test)]` and `#[cfg(all(test, …))]` items (inline `mod tests { .. }`), comments, doc links and
string literals. A file naming itself is not an edge.

Prints every strongly connected component of more than one file, with each file's edges
inside it and the paths that make them; exit status 1 when there is one. `--print` also
prints every edge.

With `--allow FILE` (scripts/check-layers.sh runs it so over every crate), FILE names the
crates (the folder under rust/, one a line, `#` comments) that still have a circle: their
circles are printed as a note. The check fails when a crate not in FILE has a circle, when
a crate in FILE has none left ("remove it from the allowlist": the list only shrinks), and
when FILE names a crate that was not checked.
"""

import collections
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
DEF = r"(?:fn|struct|enum|trait|type|const|static|union|mod)\s+{name}\b|macro_rules!\s*{name}\b"


def strip(src):
    """The code without comments, string / char literals; newlines kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if src[i] == "\n" else "")
                    i += 1
        elif (m := re.compile(r'b?r(#*)"').match(src, i)) and (i == 0 or not re.match(r"\w", src[i - 1])):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j + 1
        elif c == "'" and (m := re.compile(r"'(?:\\(?:x..|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", re.S).match(src, i)):
            out.append("' '")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(code, i):
    """Index just past the item starting at `i`: its `;` or its balanced `{ .. }`."""
    depth = 0
    while i < len(code):
        c = code[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0 and c == "}":
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return i


def drop_test_items(code):
    """The code without its test-only items: `#[cfg(test)]`, `#[cfg(all(test, …))]`."""
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\((?:test|all\(\s*test\s*,[^\]]*\))\)\]", code):
        if m.start() < pos:
            continue
        out.append(code[pos : m.start()])
        end = matching(code, m.end())
        out.append("\n" * code.count("\n", m.start(), end))
        pos = end
    out.append(code[pos:])
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d as f, e}}` -> ['a::b', 'a::c::d@f', 'a::c::e'].

    `self` in braces is the prefix; `@` marks an `as` rename."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))
    if "{" not in tree:
        return [tree]
    k = tree.index("{")
    prefix, body = tree[:k], tree[k + 1 : tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    paths = []
    for p in filter(None, parts):
        for sub in expand_use(p):
            paths.append(prefix.rstrip(":") if sub == "self" else prefix + sub)
    return paths


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path (tuple) -> file (relative)
        binary_only = not os.path.exists(os.path.join(src, "lib.rs"))
        for dirpath, _, names in os.walk(src):
            for f in sorted(names):
                if not f.endswith(".rs"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), src)
                parts = rel[:-3].split(os.sep)
                if parts == ["main"] and binary_only:
                    parts = []
                elif parts == ["main"] or parts[:1] == ["bin"]:
                    continue
                if parts and parts[-1] in ("mod", "lib"):
                    parts = parts[:-1]
                self.files[tuple(parts)] = rel
        self.code = {}
        for mod, rel in self.files.items():
            with open(os.path.join(src, rel), encoding="utf-8") as fh:
                self.code[mod] = drop_test_items(strip(fh.read()))
        self.reexports = {m: self.read_reexports(m) for m in self.files}

    def children(self, mod):
        return {m[-1] for m in self.files if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def uses(self, mod):
        """(is_pub, path) of each `use` item of the file."""
        for m in re.finditer(r"(?<![\w:])(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", self.code[mod]):
            for p in expand_use(m.group(2)):
                yield bool(m.group(1)), p.split("@")[0].lstrip(":")

    def read_reexports(self, mod):
        named, globs = {}, []
        code = self.code[mod]
        for m in re.finditer(r"(?<![\w:])pub(?:\([^)]*\))?\s+use\s+([^;]*);", code):
            for tree in expand_use(m.group(1)):
                path, _, alias = tree.partition("@")
                last = path.split("::")[-1]
                if last == "*":
                    globs.append(path[:-3])
                else:
                    named[alias or last] = path
        return named, globs

    def absolute(self, mod, path):
        """The module-tree path (list of segments) that `path`, written in `mod`, names."""
        segs = [s for s in path.split("::") if s]
        if not segs:
            return None
        first = segs[0]
        if first == "crate":
            return segs[1:]
        if first in ("super", "self"):
            base = list(mod)
            while segs and segs[0] in ("super", "self"):
                if segs.pop(0) == "super":
                    if not base:
                        return None
                    base.pop()
            return base + segs
        if first in self.children(mod):
            return list(mod) + segs
        return None

    def resolve(self, segs, depth=0):
        """The file (module key) defining what the absolute path `segs` names."""
        mod = ()
        i = 0
        while i < len(segs) and mod + (segs[i],) in self.files:
            mod += (segs[i],)
            i += 1
        if i < len(segs) and depth < 8:
            name = segs[i].rstrip("!")
            named, globs = self.reexports[mod]
            if name in named:
                target = self.absolute(mod, named[name])
                if target is not None:
                    return self.resolve(target + segs[i + 1 :], depth + 1)
            if not re.search(DEF.format(name=re.escape(name)), self.code[mod]):
                for g in globs:
                    target = self.absolute(mod, g)
                    if target is None:
                        continue
                    hit = self.resolve(target + [name], depth + 1)
                    if hit != tuple(target) or re.search(
                        DEF.format(name=re.escape(name)), self.code.get(tuple(target), "")
                    ):
                        return self.resolve(target + segs[i:], depth + 1)
        return mod

    def edges(self):
        out = collections.defaultdict(set)  # (a, b) -> {path}
        path_re = re.compile(r"(?<![\w:])((?:crate|super|self|" + IDENT + r")(?:::(?:" + IDENT + r"|\{))+!?)")
        for mod in self.files:
            code = self.code[mod]
            children = self.children(mod)
            written = []
            for is_pub, p in self.uses(mod):
                if not is_pub:
                    written.append(p)
            # Paths in the code outside `use` items.
            body = re.sub(r"(?<![\w:])(pub(?:\([^)]*\))?\s+)?use\s+[^;]*;", ";", code)
            for m in path_re.finditer(body):
                p = m.group(1).rstrip(":{")
                first = p.split("::")[0]
                if first in ("crate", "super", "self") or first in children:
                    written.append(p)
            for p in written:
                segs = self.absolute(mod, p)
                if segs is None:
                    continue
                if segs and segs[-1] == "*":
                    segs = segs[:-1]
                target = self.resolve(segs)
                if target != mod:
                    out[(mod, target)].add(p)
        return out


def sccs(nodes, adj):
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj[v]):
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
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def circles(src):
    """(crate, edges, the circles: lists of module keys) of the crate in `src`."""
    crate = Crate(src)
    edges = crate.edges()
    adj = collections.defaultdict(set)
    for a, b in edges:
        adj[a].add(b)
    return crate, edges, [c for c in sccs(crate.files, adj) if len(c) > 1]


def check_one(src, print_edges):
    crate, edges, found = circles(src)
    name = crate.files.get
    if print_edges:
        for (a, b), paths in sorted(edges.items()):
            print(f"{name(a)} -> {name(b)}  ({', '.join(sorted(paths))})")
    for comp in found:
        print(f"circle of {len(comp)} files:")
        for a in comp:
            for b in comp:
                if (a, b) in edges:
                    paths = ", ".join(sorted(edges[(a, b)]))
                    print(f"  {name(a)} -> {name(b)}  ({paths})")
    if not found:
        print(f"no import circle among the {len(crate.files)} files of {src}")
    return 1 if found else 0


def read_allow(path):
    with open(path, encoding="utf-8") as fh:
        lines = (line.split("#", 1)[0].strip() for line in fh)
        return {line for line in lines if line}


def check_all(allow_file, srcs, print_edges):
    allowed = read_allow(allow_file)
    failed = 0
    checked = set()
    for src in srcs:
        crate_name = os.path.basename(os.path.dirname(os.path.normpath(src)))
        checked.add(crate_name)
        if crate_name not in allowed:
            failed |= check_one(src, print_edges)
            continue
        crate, _, found = circles(src)
        if not found:
            print(f"FAILED: {crate_name} has no import circle left: remove {crate_name} from {allow_file}")
            failed = 1
            continue
        for comp in found:
            files = ", ".join(crate.files[m] for m in comp)
            print(f"note: {crate_name} (in {allow_file}, issue 43's open work): circle of {len(comp)} files: {files}")
    for stale in sorted(allowed - checked):
        print(f"FAILED: {allow_file} names {stale}, which is not a crate checked here: remove it")
        failed = 1
    return failed


def take_allow(args):
    """Remove `--allow FILE` from `args` (in place); its FILE, None when absent, or False
    when `--allow` has no FILE after it (a usage error)."""
    if "--allow" not in args:
        return None
    k = args.index("--allow")
    if k + 1 >= len(args):
        return False
    allow = args[k + 1]
    del args[k : k + 2]
    return allow


def main():
    args = sys.argv[1:]
    print_edges = "--print" in args
    allow = take_allow(args)
    if allow is False:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    srcs = [a for a in args if not a.startswith("--")]
    if allow is not None and srcs:
        return check_all(allow, srcs, print_edges)
    if len(srcs) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    return check_one(srcs[0], print_edges)


if __name__ == "__main__":
    sys.exit(main())
