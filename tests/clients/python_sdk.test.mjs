// The official Python SDK's flow (python_sdk.py), one test per transport, run here so
// that node's closing lines count it with the other clients. GODOT_MCP_PYTHON is the
// venv's python that tests/clients/run.sh installs the pinned `mcp` into.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';

const PYTHON = process.env.GODOT_MCP_PYTHON;
const SCRIPT = fileURLToPath(new URL('./python_sdk.py', import.meta.url));

describe('Python SDK client', () => {
  for (const [transport, testCase] of [['stdio', 'OverStdio'], ['http', 'OverHttp']]) {
    test(`initialize, tools/list (default and all), a read and a refusal over ${transport}`, async () => {
      assert.ok(PYTHON, 'GODOT_MCP_PYTHON names the venv python (tests/clients/run.sh sets it)');
      try {
        await promisify(execFile)(PYTHON, [SCRIPT, testCase], { maxBuffer: 16 << 20 });
      } catch (e) {
        assert.fail(`python_sdk.py ${testCase} failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
      }
    });
  }
});
