"""The official Python SDK (`mcp` from PyPI, pinned in requirements.txt) drives the real
`godot-mcp serve` over stdio and over streamable HTTP: initialize, tools/list with the
default and with every toolset, a read, a refusal. python_sdk.test.mjs runs it (one
test per transport) in the venv tests/clients/run.sh makes; GODOT_MCP_BIN names the
binary.
"""

import asyncio
import os
import shutil
import subprocess
import tempfile
import threading
import unittest
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("GODOT_MCP_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug" / "godot-mcp"
)
LISTENING = "godot-mcp serve: listening on http://"


def contract_tool_count():
    """The tools in the committed contract (every toolset): one snapshot a tool."""
    return len(list((REPO / "tests/snapshots/tools").glob("*.snap")))


def server_env(state, extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GODOT_MCP_")}
    env.update(GODOT_MCP_STATE_DIR=state, GODOT_MCP_EDITOR_BRIDGE="off", **(extra or {}))
    return env


@asynccontextmanager
async def stdio_session(project, state, extra):
    params = StdioServerParameters(
        command=BIN, args=["serve", "--project", project, *extra], env=server_env(state)
    )
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                yield session


@asynccontextmanager
async def http_session(project, state, extra):
    token = f"godot-mcp-clients-python-{os.getpid()}"
    server = subprocess.Popen(
        [BIN, "serve", "--project", project, "--http", "127.0.0.1:0", *extra],
        env=server_env(state, {"GODOT_MCP_AUTH_TOKEN": token}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        for line in server.stderr:  # the listening line is the readiness signal
            seen.append(line)
            if line.startswith(LISTENING):
                url = "http://" + line[len(LISTENING) :].strip()
                break
        else:
            raise AssertionError("godot-mcp exited before listening:\n" + "".join(seen))
        # Keep draining stderr so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                yield session
    finally:
        server.terminate()
        server.wait()
        server.stderr.close()


class PythonSdk:
    """The flow, once per transport (the subclasses below)."""

    connect = None

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="godot-mcp-clients-py-")
        self.project = os.path.join(self.root, "project")
        top = REPO / "godot_project"
        generated = lambda d, names: [".godot", "addons"] if Path(d) == top else []  # noqa: E731
        shutil.copytree(top, self.project, ignore=generated)

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    async def asyncSetUp(self):
        # unittest runs the loop in debug mode; a slow debug build is not a finding.
        asyncio.get_running_loop().slow_callback_duration = 60

    async def test_flow(self):
        state = os.path.join(self.root, "state")
        async with type(self).connect(self.project, state + "-plain", []) as s:
            init = await s.initialize()
            self.assertEqual(init.server_info.name, "godot-mcp")
            self.assertTrue(init.capabilities.tools.list_changed)
            default = [t.name for t in (await s.list_tools()).tools]
            self.assertIn("manage_toolsets", default)

            read = await s.call_tool("scripts_read", {"path": "res://scripts/player.gd"})
            self.assertFalse(read.is_error, read)
            text = Path(self.project, "scripts/player.gd").read_text()
            self.assertEqual(read.structured_content["content"], text)

            refused = await s.call_tool("scripts_read", {"path": "res://../outside.gd"})
            self.assertTrue(refused.is_error, refused)
            self.assertEqual(refused.structured_content["error"]["code"], "PATH_REFUSED")
        async with type(self).connect(self.project, state + "-all", ["--toolsets", "all"]) as s:
            await s.initialize()
            every = [t.name for t in (await s.list_tools()).tools]
            self.assertEqual(len(every), contract_tool_count())
            self.assertTrue(set(default) < set(every))


class OverStdio(PythonSdk, unittest.IsolatedAsyncioTestCase):
    connect = staticmethod(stdio_session)


class OverHttp(PythonSdk, unittest.IsolatedAsyncioTestCase):
    connect = staticmethod(http_session)


if __name__ == "__main__":
    unittest.main(verbosity=2)
