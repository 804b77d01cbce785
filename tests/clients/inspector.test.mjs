// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in
// package-lock.json), run as a new user would run it:
//   npx @modelcontextprotocol/inspector --cli godot-mcp serve --project <dir> --method tools/list
// It exits non-zero when its TypeScript SDK client refuses the answer (a tools/list
// with one non-object property schema fails whole).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { BIN, contractToolCount, tempProject } from './server.mjs';

const INSPECTOR = fileURLToPath(new URL('./node_modules/.bin/mcp-inspector', import.meta.url));

/** `mcp-inspector --cli <godot-mcp> serve --project <dir> [serveArgs] -e … <inspectorArgs>`: its JSON output. */
async function inspect(fixture, serveArgs, inspectorArgs) {
  const args = [
    '--cli',
    BIN,
    'serve',
    '--project',
    fixture.project,
    ...serveArgs,
    // The Inspector passes the server only the environment it is given.
    '-e',
    `GODOT_MCP_STATE_DIR=${join(fixture.state, 'inspector')}`,
    '-e',
    'GODOT_MCP_EDITOR_BRIDGE=off',
    ...inspectorArgs,
  ];
  try {
    const { stdout } = await promisify(execFile)(INSPECTOR, args, { maxBuffer: 64 << 20 });
    return JSON.parse(stdout);
  } catch (e) {
    assert.fail(`mcp-inspector ${args.join(' ')} failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
}

describe('MCP Inspector CLI', () => {
  let fixture;
  before(() => {
    fixture = tempProject();
  });
  after(() => fixture?.remove());

  test('tools/list (default toolsets) lists the tools of the enabled toolsets', async () => {
    const { tools } = await inspect(fixture, [], ['--method', 'tools/list']);
    const call = await inspect(fixture, [], ['--method', 'tools/call', '--tool-name', 'list_toolsets']);
    assert.equal(call.isError, false, JSON.stringify(call));
    const enabled = call.structuredContent.toolsets.filter((t) => t.enabled).flatMap((t) => t.tools);
    assert.deepEqual(tools.map((t) => t.name).sort(), enabled.sort());
    console.log(`inspector: tools/list default: ${tools.length} tools`);
  });

  test('tools/list --toolsets all lists every tool of the contract', async () => {
    const { tools } = await inspect(fixture, ['--toolsets', 'all'], ['--method', 'tools/list']);
    assert.equal(tools.length, contractToolCount());
    console.log(`inspector: tools/list all toolsets: ${tools.length} tools`);
  });

  test('tools/call reads a script', async () => {
    const r = await inspect(fixture, [], [
      '--method',
      'tools/call',
      '--tool-name',
      'scripts_read',
      '--tool-arg',
      'path=res://scripts/player.gd',
    ]);
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.equal(r.structuredContent.path, 'res://scripts/player.gd');
    assert.match(r.structuredContent.content, /^class_name Player/);
  });
});
