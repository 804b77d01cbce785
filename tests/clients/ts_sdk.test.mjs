// The official TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// package-lock.json) drives the real `godot-mcp serve` over stdio and over streamable
// HTTP. Most MCP clients (the Inspector, Claude Code, Cursor, VS Code) are built on it;
// it validates every response with its own schemas (tools/list included) and compiles
// every tool's outputSchema, so a tools/list it refuses fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, contractToolCount, serveArgs, serverEnv, startHttp, tempProject } from './server.mjs';

/** A connected client and how to close it (and its server). */
async function connect(transport, project, state, extra) {
  const client = new Client({ name: 'godot-mcp-clients-ts', version: '1.0.0' });
  if (transport === 'stdio') {
    await client.connect(
      new StdioClientTransport({
        command: BIN,
        args: serveArgs(project, extra),
        env: serverEnv(state),
        stderr: 'ignore',
      }),
    );
    return { client, close: () => client.close() };
  }
  const server = await startHttp(project, state, extra);
  await client.connect(
    new StreamableHTTPClientTransport(server.url, {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
    }),
  );
  return {
    client,
    close: async () => {
      await client.close();
      await server.stop();
    },
  };
}

/** A tool call that must succeed: its structuredContent. */
async function callOk(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r)}`);
  assert.ok(r.structuredContent, `${name} returns structuredContent`);
  return r.structuredContent;
}

/** A tool call that must be refused: its structured error. */
async function callRefused(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} is refused: ${JSON.stringify(r)}`);
  const error = r.structuredContent?.error;
  assert.ok(error && typeof error.code === 'string' && typeof error.message === 'string', JSON.stringify(r));
  return error;
}

for (const transport of ['stdio', 'http']) {
  describe(`TypeScript SDK client over ${transport}`, () => {
    let fixture, plainFixture, plain, all;

    before(async () => {
      // One server per project folder (the lease inside it, .godot/godot-mcp.lease), so
      // each of the two has its own copy; the tests read and write `fixture`, all's.
      fixture = tempProject();
      plainFixture = tempProject();
      // The default toolsets (the core enabled, the rest within reach), and every toolset.
      plain = await connect(transport, plainFixture.project, plainFixture.state, []);
      all = await connect(transport, fixture.project, fixture.state, ['--toolsets', 'all']);
    });

    after(async () => {
      await plain?.close();
      await all?.close();
      fixture?.remove();
      plainFixture?.remove();
    });

    test('initialize: server info and capabilities', () => {
      const info = plain.client.getServerVersion();
      assert.equal(info.name, 'godot-mcp');
      const caps = plain.client.getServerCapabilities();
      assert.equal(caps.tools?.listChanged, true, JSON.stringify(caps));
      assert.ok(caps.resources, JSON.stringify(caps));
    });

    test('tools/list with the default toolsets, validated by the SDK', async () => {
      const { tools } = await plain.client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['list_toolsets', 'manage_toolsets', 'create_nodes', 'write_script']) assert.ok(names.includes(n), n);
      // Exactly the tools of the enabled toolsets, as list_toolsets reports them.
      const listed = await callOk(plain.client, 'list_toolsets', {});
      const enabled = listed.toolsets.filter((t) => t.enabled).flatMap((t) => t.tools);
      assert.deepEqual([...names].sort(), [...enabled].sort());
    });

    test('tools/list with every toolset, validated by the SDK', async () => {
      const { tools } = await all.client.listTools();
      assert.equal(tools.length, contractToolCount(), 'every tool of the committed contract');
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.equal(typeof t._meta?.safety_class, 'string', t.name);
      }
    });

    test('a read tool', async () => {
      const info = await callOk(all.client, 'project_info', {});
      assert.equal(typeof info.name, 'string', JSON.stringify(info));
      const script = await callOk(plain.client, 'scripts_read', { path: 'res://scripts/player.gd' });
      assert.equal(script.content, readFileSync(join(fixture.project, 'scripts/player.gd'), 'utf8'));
    });

    test('a dry_run edit changes nothing', async () => {
      const file = join(fixture.project, 'scripts/player.gd');
      const before = readFileSync(file);
      const r = await callOk(all.client, 'write_script', {
        path: 'res://scripts/player.gd',
        content: 'extends Node\n',
        dry_run: true,
      });
      assert.equal(r.dry_run, true, JSON.stringify(r));
      assert.equal(r.applied, false, JSON.stringify(r));
      assert.deepEqual(readFileSync(file), before);
    });

    test('refusals are structured errors and change nothing', async () => {
      const escaping = await callRefused(plain.client, 'scripts_read', { path: 'res://../outside.gd' });
      assert.equal(escaping.code, 'PATH_REFUSED');
      assert.equal(escaping.param, 'path');
      const file = join(fixture.project, 'scripts/enemy.gd');
      const before = readFileSync(file);
      const unconfirmed = await callRefused(all.client, 'delete_resource_file', { path: 'res://scripts/enemy.gd' });
      assert.equal(unconfirmed.required, 'confirm', JSON.stringify(unconfirmed));
      assert.deepEqual(readFileSync(file), before);
    });

    test('a resource read', async () => {
      const { resources } = await plain.client.listResources();
      const uris = resources.map((r) => r.uri);
      assert.ok(uris.includes('godot-mcp://transactions'), JSON.stringify(uris));
      const { contents } = await plain.client.readResource({ uri: 'godot-mcp://transactions' });
      assert.equal(contents.length, 1);
      assert.equal(contents[0].mimeType, 'application/json');
      const body = JSON.parse(contents[0].text);
      assert.ok(Array.isArray(body.transactions), contents[0].text);
    });

    test('notifications/tools/list_changed after manage_toolsets', async () => {
      const changed = new Promise((resolve) =>
        plain.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      const before = (await plain.client.listTools()).tools.map((t) => t.name);
      assert.ok(!before.includes('add_input_action'));
      const r = await callOk(plain.client, 'manage_toolsets', { enable: ['input_map'] });
      assert.equal(r.applied, true, JSON.stringify(r));
      await changed;
      const after = (await plain.client.listTools()).tools.map((t) => t.name);
      assert.ok(after.includes('add_input_action'), JSON.stringify(after));
    });
  });
}
