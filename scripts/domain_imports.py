#!/usr/bin/env python3
"""No tool domain imports another (issue #43: shared kits below the domains).

    domain_imports.py [--allow FILE] [--print] [SRC_DIR]

SRC_DIR is the server crate's `src` (default: rust/godot-mcp-server/src beside this
script's folder). Under SRC_DIR/tools, each folder (`tools/scene/`) and each single file
(`tools/batch.rs`) is a domain, except these, which are not:

- `kit/`: the shared kit every domain builds with (editor edits, file writes, scene
  documents, steps, the small checks, Godot and .NET as child processes, the running
  game's session, probe, clock and debugger connection). It sits below the domains, so
  it imports none;
- `registry.rs`, `registry/`: the table every tool is registered in (`ToolDef`, its
  schema and argument decoding). Also below the domains: it imports none;
- `tools/mod.rs` itself: it names every domain once, to chain their `tools()` into
  `Registry::builtin`; that is a list, not a use.

A file's imports are file_cycles.py's edges (every path written out in non-test code, and
every `use`, resolved to the file that defines the item, re-exports followed), so the
same rules as the circle check apply: comments, strings and test-only items
(`#[cfg(test)]`, `#[cfg(all(test, …))]`) are not edges. A file reached only through a
test-only `mod x;` (a `tests.rs`) is test code and is not checked.

A finding is a file in domain X (or in kit or registry) naming something a file in
another domain Y defines: `X -> Y`. Each is printed with the files and the paths that make
it; exit status 1 when one is not in the allowlist. With `--allow FILE`
(scripts/check-layers.sh passes scripts/domain_imports.allow) the edges FILE lists, one
`X -> Y  # reason` a line, are printed as a note and let through. The list only shrinks:
an entry whose edge no longer exists fails the check until its line is removed; so does an
entry without a reason. `--print` also prints every domain's allowed and found edges.
"""

import collections
import os
import re
import sys

# The crate reader (comment/string stripper, test items left out, paths resolved along
# the module tree) is file_cycles.py's (same folder).
from file_cycles import Crate, take_allow

NOT_DOMAINS = {"kit", "registry"}
BELOW = {"kit", "registry"}  # import no domain either


def reachable(crate):
    """Module keys declared by non-test code (`mod x;` outside test items), from the root."""
    seen, todo = set(), [()]
    while todo:
        mod = todo.pop()
        if mod in seen or mod not in crate.files:
            continue
        seen.add(mod)
        for m in re.finditer(r"(?<![\w:])mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", crate.code[mod]):
            todo.append(mod + (m.group(1),))
    return seen


def room(mod):
    """'kit', 'registry', a domain's name, or None (outside tools/, or tools/mod.rs)."""
    if len(mod) >= 2 and mod[0] == "tools":
        return mod[1]
    return None


def domain_edges(src):
    """{(X, Y): {(file, target file, path)}} of every import from room X into domain Y."""
    crate = Crate(src)
    live = reachable(crate)
    out = collections.defaultdict(set)
    for (a, b), paths in crate.edges().items():
        if a not in live:
            continue
        x, y = room(a), room(b)
        if x is None or y is None or x == y or y in NOT_DOMAINS:
            continue
        for p in paths:
            out[(x, y)].add((crate.files[a], crate.files[b], p))
    return out


def read_allow(path):
    """{(X, Y): reason} of the allowlist, and the errors in it."""
    entries, errors = {}, []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            body, _, reason = line.partition("#")
            if not body.strip():
                continue
            m = re.fullmatch(r"\s*([a-z_]+)\s*->\s*([a-z_]+)\s*", body)
            where = f"{path}:{n}"
            if not m:
                errors.append(f"{where}: not `X -> Y  # reason`")
                continue
            if not reason.strip():
                errors.append(f"{where}: {m.group(1)} -> {m.group(2)} has no reason (`# why it may stay`)")
            entries[(m.group(1), m.group(2))] = reason.strip()
    return entries, errors


def main():
    args = sys.argv[1:]
    print_all = "--print" in args
    args = [a for a in args if a != "--print"]
    allow_file = take_allow(args)
    if allow_file is False:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    src = args[0] if args else os.path.join(here, "..", "rust", "godot-mcp-server", "src")
    allowed, errors = read_allow(allow_file) if allow_file else ({}, [])
    failed = bool(errors)
    for e in errors:
        print(f"FAILED: {e}")
    found = domain_edges(src)
    for (x, y), sites in sorted(found.items()):
        listed = (x, y) in allowed
        if listed and not print_all:
            continue
        what = "below the domains, imports" if x in BELOW else "imports"
        head = f"note: {x} -> {y} (allowed: {allowed[(x, y)]})" if listed else f"FAILED: {x} {what} domain {y}:"
        print(head)
        for a, b, p in sorted(sites):
            print(f"  {a} -> {b}  ({p})")
        failed |= not listed
    if allowed:
        kept = sorted(e for e in allowed if e in found)
        print(f"note: {len(kept)} domain imports still allowed ({allow_file}): " + ", ".join(f"{x} -> {y}" for x, y in kept))
    for x, y in sorted(set(allowed) - set(found)):
        print(f"FAILED: {allow_file} lists `{x} -> {y}`, which no file imports now: remove the line")
        failed = True
    if not found:
        print("no domain imports another; kit and registry import no domain")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
