#!/usr/bin/env python3
"""Start-up and memory of `godot-mcp serve` against the floor (a bare rmcp server).

Runs the floor (rust/godot-mcp-server/examples/floor.rs: rmcp over stdio, two tools)
and `godot-mcp serve --project <copy of godot_project> --toolsets all` side by side,
interleaved, from the official Python MCP client, and prints medians and ratios:

  start -> initialize answered, fresh state dir (a new GODOT_MCP_STATE_DIR per round)
  start -> initialize answered, warm state dir (the journal already there)
  the same two again from a bare pipe client (--raw starts per round: write the
    initialize line, read the answer's line), whose own cost is far smaller and
    steadier than the SDK client's, so a change of a few hundred microseconds shows
  peak RSS (VmHWM of the server process, read after tools/list, before stdin closes)
  tools/list: time per KB of the result

Not a test: nothing is asserted. The MCP client (`mcp` from PyPI, pinned below) is
installed into a venv on first use, like scripts/lint-workflows.sh does for zizmor.

  cargo build --release -p godot-mcp-server --bin godot-mcp
  cargo build --release -p godot-mcp-server --example floor   # separately: built in one
    # command, godot-mcp would carry the journal's failpoints (dev-dependency features)
  scripts/bench-startup.py [--rounds 9] [--profile release] [--server path/to/godot-mcp]

Environment: GODOT_MCP_BENCH_DIR  where the venv lives (default:
             $CARGO_TARGET_DIR/bench, else target/bench in the repository).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MCP_VERSION = "2.3.0"
REPO = Path(__file__).resolve().parent.parent


def ensure_venv() -> None:
    """Re-executes this script under the venv's Python, installing `mcp` first."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    bench_dir = Path(os.environ.get("GODOT_MCP_BENCH_DIR") or target / "bench")
    venv = bench_dir / "venv"
    python = venv / "bin" / "python"
    stamp = venv / f".installed-mcp-{MCP_VERSION}"
    if Path(sys.prefix).resolve() == venv.resolve() and stamp.exists():
        return
    if not stamp.exists():
        print(f"==> installing mcp=={MCP_VERSION} into {venv}", file=sys.stderr)
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"mcp=={MCP_VERSION}"],
            check=True,
        )
        stamp.touch()
    os.execv(str(python), [str(python), *sys.argv])


def child_pid(parent: int, known: set) -> int:
    """The newest child process of `parent` not in `known` (the server just spawned)."""
    for _ in range(1000):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in known:
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
            if ppid == parent:
                return int(entry)
        time.sleep(0.001)
    raise RuntimeError("the server process was not found")


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


async def one_run(command: list, env: dict) -> dict:
    """Spawns one server, initializes, lists tools, reads its peak RSS, closes."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    me = os.getpid()
    known = {int(e) for e in os.listdir("/proc") if e.isdigit()}
    with open(os.devnull, "w") as devnull:
        t0 = time.perf_counter()
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                t_init = time.perf_counter() - t0
                pid = child_pid(me, known)
                t1 = time.perf_counter()
                tools = await session.list_tools()
                t_list = time.perf_counter() - t1
                size = len(tools.model_dump_json(by_alias=True, exclude_none=True))
                hwm = vm_hwm_kib(pid)
    return {"init": t_init, "list": t_list, "kb": size / 1024, "tools": len(tools.tools),
            "rss": hwm}


INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              b'"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n')


def raw_run(command: list, env: dict) -> float:
    """Start -> the first line of the initialize answer, from a bare pipe client."""
    t0 = time.perf_counter()
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=os.environ | env)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    line = p.stdout.readline()
    elapsed = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    if b'"result"' not in line:
        raise RuntimeError(f"{command[0]}: no initialize answer: {line[:200]!r}")
    return elapsed


def main() -> None:
    ensure_venv()
    import anyio

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--raw", type=int, default=10,
                    help="bare pipe client starts of each kind per round (0: none)")
    ap.add_argument("--profile", default="release", help="cargo profile folder (release, debug)")
    ap.add_argument("--server", help="the godot-mcp binary to time (default: the profile's; "
                    "pass an older build to alternate runs of two versions)")
    args = ap.parse_args()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target") / args.profile
    ours, floor = target / "godot-mcp", target / "examples" / "floor"
    if args.server:
        ours = Path(args.server).resolve()
    for exe in (ours, floor):
        if not exe.exists():
            sys.exit(f"{exe} is missing: cargo build --{args.profile} -p godot-mcp-server "
                     "--bin godot-mcp, then (a second command) --example floor")

    work = Path(tempfile.mkdtemp(prefix="godot-mcp-bench-"))
    try:
        project = work / "project"
        shutil.copytree(REPO / "godot_project", project)
        # The copy's (and an earlier run's deletions') metadata to disk before timing: a
        # start's first fsync would otherwise commit it (on a disk mounted with `discard`,
        # with the trims of everything an earlier run deleted).
        os.sync()
        warm_state = work / "warm-state"
        env = {"GODOT_MCP_LOG": "info"}
        cmd_ours = [str(ours), "serve", "--project", str(project), "--toolsets", "all"]
        # One run to create the warm state dir (journal, lease file; no intent log).
        anyio.run(one_run, cmd_ours, env | {"GODOT_MCP_STATE_DIR": str(warm_state)})

        runs = {"floor": [], "fresh": [], "warm": []}
        raw = {"floor": [], "fresh": [], "warm": []}
        for i in range(args.rounds):
            for j in range(args.raw):
                raw["floor"].append(raw_run([str(floor)], {}))
                fresh_state = work / f"raw-fresh-{i}-{j}"
                raw["fresh"].append(
                    raw_run(cmd_ours, env | {"GODOT_MCP_STATE_DIR": str(fresh_state)}))
                raw["warm"].append(
                    raw_run(cmd_ours, env | {"GODOT_MCP_STATE_DIR": str(warm_state)}))
            # Interleaved: one of each per round, so load drifts hit all three alike.
            runs["floor"].append(anyio.run(one_run, [str(floor)], {}))
            fresh_state = work / f"fresh-{i}"
            runs["fresh"].append(
                anyio.run(one_run, cmd_ours, env | {"GODOT_MCP_STATE_DIR": str(fresh_state)}))
            runs["warm"].append(
                anyio.run(one_run, cmd_ours, env | {"GODOT_MCP_STATE_DIR": str(warm_state)}))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    def per_kb(kind: str) -> float:
        return statistics.median(r["list"] / r["kb"] for r in runs[kind])

    f_init, f_rss = med("floor", "init"), med("floor", "rss")
    print(f"{args.rounds} interleaved rounds, {args.profile} build, medians "
          f"(floor: {runs['floor'][0]['tools']} tools; ours: {runs['warm'][0]['tools']} tools, "
          f"tools/list {runs['warm'][0]['kb']:.1f} KB)")
    print(f"{'figure':<34} {'floor':>10} {'ours':>10} {'ratio':>7}")
    rows = [
        ("start -> initialize, fresh state", f_init, med("fresh", "init"), "s"),
        ("start -> initialize, warm state", f_init, med("warm", "init"), "s"),
        ("peak RSS (VmHWM), warm state", f_rss / 1024, med("warm", "rss") / 1024, "MiB"),
        ("peak RSS (VmHWM), fresh state", f_rss / 1024, med("fresh", "rss") / 1024, "MiB"),
        ("tools/list per KB", per_kb("floor"), per_kb("warm"), "s/KB"),
    ]
    if args.raw:
        r_floor = statistics.median(raw["floor"])
        rows += [
            (f"bare client ({len(raw['warm'])}): fresh state", r_floor,
             statistics.median(raw["fresh"]), "s"),
            (f"bare client ({len(raw['warm'])}): warm state", r_floor,
             statistics.median(raw["warm"]), "s"),
        ]
    for name, a, b, unit in rows:
        fmt = "{:>10.2f}" if unit == "MiB" else "{:>10.5f}"
        print(f"{name:<34} {fmt.format(a)} {fmt.format(b)} {b / a:>6.2f}x  ({unit})")


if __name__ == "__main__":
    main()
