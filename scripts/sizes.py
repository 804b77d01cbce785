#!/usr/bin/env python3
"""Source files and functions over their size limits (issue #43: no non-test source file
over 800 lines, no function over 150 lines).

    sizes.py [--allow FILE] [ROOT]

ROOT is the repository (default: this script's parent folder). Every `.rs` file under
ROOT/rust/*/src, and every ROOT/rust/*/build.rs, is read, except test files: a file
named `tests.rs` and any file under a `tests/` folder.

- A file's size is its count of lines (blank lines and comments included) minus the lines
  of its test-only items, `#[cfg(test)]` and `#[cfg(all(test, …))]` (an inline
  `mod tests { .. }`, a test-only function). Over 800 is a finding.
- A function's size is its count of lines from the line of its `fn` keyword to the line of
  its closing brace, both included (attributes and doc comments above it are not counted;
  a nested function counts inside its parent too). Functions without a body (trait
  declarations) and functions inside test-only items are not counted. Over 150 is a
  finding.

Braces are matched on the code with comments and string / char literals blanked out, so a
`{` in a string or comment does not count.

Prints every finding (`path: N lines`, `path: fn name: N lines`) and exits 1 when one is
not in the allowlist. With `--allow FILE` (scripts/check-layers.sh passes
scripts/sizes.allow) the entries of FILE are let through; each line is

    fn PATH NAME  # reason
    file PATH  # reason

with PATH relative to ROOT, and the reason after `#` is required. A function entry names
every function of that name in the file. The list only shrinks: an entry that matches no
finding (the file or function is under its limit now, or is gone) fails the check until
its line is removed; so does an entry without a reason. The list is empty (no exceptions:
docs/architecture.md "Invariants"); a FILE of comments only, or of nothing, lets nothing
through.
"""

import glob
import os
import re
import sys

# The comment/string stripper and the item matcher are file_cycles.py's (same folder).
from file_cycles import matching, strip, take_allow

FILE_LIMIT = 800
FN_LIMIT = 150


def drop_test_items(code):
    """The code with its test-only items (`#[cfg(test)]`, `#[cfg(all(test, …))]`) blanked
    out (to empty lines), and the number of lines they took."""
    out, pos, dropped = [], 0, 0
    for m in re.finditer(r"#\[cfg\((?:test|all\(\s*test\s*,[^\]]*\))\)\]", code):
        if m.start() < pos:
            continue
        out.append(code[pos : m.start()])
        end = matching(code, m.end())
        lines = code.count("\n", m.start(), end) + 1
        dropped += lines
        out.append("\n" * code.count("\n", m.start(), end))
        pos = end
    out.append(code[pos:])
    return "".join(out), dropped


def functions(code):
    """(name, first line, line count) of every function with a body in `code`."""
    for m in re.finditer(r"(?<![\w])fn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
        i, depth = m.end(), 0
        body = None
        while i < len(code):
            c = code[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c == ";":
                break
            elif depth == 0 and c == "{":
                body = i
                break
            i += 1
        if body is None:
            continue
        end = matching(code, body)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end - 1) + 1
        yield m.group(1), first, last - first + 1


def is_test_file(rel):
    parts = rel.split("/")
    return parts[-1] == "tests.rs" or "tests" in parts[:-1]


def sources(root):
    found = glob.glob(os.path.join(root, "rust", "*", "src", "**", "*.rs"), recursive=True)
    found += glob.glob(os.path.join(root, "rust", "*", "build.rs"))
    for path in sorted(found):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if not is_test_file(rel):
            yield path, rel


def findings(root):
    """(key, message) of every file and function over its limit; key is the allowlist's
    form of it: ('file', path) or ('fn', path, name)."""
    out = []
    for path, rel in sources(root):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        code, dropped = drop_test_items(strip(text))
        lines = len(text.splitlines()) - dropped
        if lines > FILE_LIMIT:
            out.append((("file", rel), f"{rel}: {lines} non-test lines (limit {FILE_LIMIT})"))
        for name, first, count in functions(code):
            if count > FN_LIMIT:
                out.append(
                    (("fn", rel, name), f"{rel}:{first}: fn {name}: {count} lines (limit {FN_LIMIT})")
                )
    return out


def read_allow(path):
    """{key: reason} of the allowlist, and the errors in it."""
    entries, errors = {}, []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            body, _, reason = line.partition("#")
            words = body.split()
            if not words:
                continue
            where = f"{path}:{n}"
            if words[0] == "fn" and len(words) == 3:
                key = ("fn", words[1], words[2])
            elif words[0] == "file" and len(words) == 2:
                key = ("file", words[1])
            else:
                errors.append(f"{where}: not `fn PATH NAME  # reason` nor `file PATH  # reason`")
                continue
            if not reason.strip():
                errors.append(f"{where}: {' '.join(words)} has no reason (`# why it may stay`)")
            entries[key] = reason.strip()
    return entries, errors


def main():
    args = sys.argv[1:]
    allow_file = take_allow(args)
    if allow_file is False:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    allowed, errors = read_allow(allow_file) if allow_file else ({}, [])
    failed = bool(errors)
    for e in errors:
        print(f"FAILED: {e}")
    seen = set()
    found = findings(root)
    for key, message in found:
        if key in allowed:
            seen.add(key)
            print(f"note: {message} (allowed: {allowed[key]})")
        else:
            print(f"FAILED: {message}")
            failed = True
    for key in sorted(set(allowed) - seen):
        print(f"FAILED: {allow_file} lists `{' '.join(key)}`, which is within its limit now (or gone): remove the line")
        failed = True
    if not found:
        print(f"no file over {FILE_LIMIT} non-test lines, no function over {FN_LIMIT} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
