// The official TypeScript SDK's 2026 client (@modelcontextprotocol/client, pinned in
// package-lock.json; the first line of the SDK that speaks protocol 2026-07-28)
// drives the real `godot-mcp serve --http` on that revision: `server/discover`,
// stateless requests, and `subscriptions/listen`. Our default tool list is small and
// grows with manage_toolsets; a 2026 client learns of the new tools only on a listen
// stream, so this is the path every such client depends on.
//
// Long work as tasks (the io.modelcontextprotocol/tasks extension): this SDK line
// (2.4.0, the newest) cannot consume a task on 2026-07-28 yet. Its Client rejects a
// `resultType: "task"` answer (SdkError UNSUPPORTED_RESULT_TYPE) and refuses
// `tasks/get` and `tasks/cancel` toward a 2026 peer before sending them
// (METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION). So the task tests check that the SDK
// Client is answered with a task, then follow the task with the SDK's own
// StreamableHTTPClientTransport (its HTTP framing, headers and SSE), writing the
// tasks/* requests by hand, and read the journal through the SDK Client. When an SDK
// release consumes tasks, the first assertion goes red: drive the task through it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { STANDIN, gutProject, startHttp, tempProject } from './server.mjs';

const V2026 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

/**
 * The SDK's transport to `server`, unowned by a Client: `request(method, params)`
 * sends one 2026-07-28 request (its `_meta` envelope declaring the tasks extension)
 * and resolves to the JSON-RPC answer.
 */
async function rawTransport(server) {
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
  });
  const waiting = new Map();
  transport.onmessage = (m) => {
    if (m.id !== undefined) waiting.get(m.id)?.(m);
  };
  await transport.start();
  const meta = {
    'io.modelcontextprotocol/protocolVersion': V2026,
    'io.modelcontextprotocol/clientInfo': { name: 'godot-mcp-clients-ts-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
  };
  let next = 1;
  return {
    request: (method, params) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
      }),
    close: () => transport.close(),
  };
}

/** run_tests as a task over `raw`: the task's id (the answer must be a task). */
async function startRunTests(raw, args) {
  const answer = await raw.request('tools/call', { name: 'run_tests', arguments: args });
  assert.equal(answer.result?.resultType, 'task', JSON.stringify(answer));
  assert.equal(answer.result.status, 'working', JSON.stringify(answer));
  return answer.result.taskId;
}

/** Poll task `id` at its pollIntervalMs until it is terminal (60 s at most). */
async function untilTerminal(raw, id) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await raw.request('tasks/get', { taskId: id });
    const task = answer.result;
    assert.ok(task, JSON.stringify(answer));
    if (['completed', 'failed', 'cancelled'].includes(task.status)) return task;
    assert.ok(Date.now() < deadline, `task ${id} still ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, task.pollIntervalMs ?? 500));
  }
}

/** Transaction `id`'s journal row, read by the SDK Client as a resource. */
async function journalRow(client, id) {
  const { contents } = await client.readResource({ uri: `godot-mcp://transactions/${id}` });
  return JSON.parse(contents[0].text);
}

/** A client pinned to 2026-07-28, connected to `server`; `capabilities` as declared. */
async function connect2026(server, capabilities = {}) {
  const client = new Client(
    { name: 'godot-mcp-clients-ts-2026', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: V2026 } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(server.url, {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
    }),
  );
  return client;
}

describe('TypeScript SDK 2026 client over http', () => {
  let fixture, server;

  before(async () => {
    fixture = tempProject();
    server = await startHttp(fixture.project, fixture.state);
  });

  after(async () => {
    await server?.stop();
    fixture?.remove();
  });

  test('the client speaks 2026-07-28 and the server declares the tasks extension', async () => {
    const client = await connect2026(server);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), V2026);
      const caps = client.getServerCapabilities();
      assert.ok(caps.extensions?.['io.modelcontextprotocol/tasks'], JSON.stringify(caps));
    } finally {
      await client.close();
    }
  });

  test('a listen stream hears tools/list_changed after manage_toolsets, and tools/list then has the new tools', async () => {
    const client = await connect2026(server);
    try {
      const changed = new Promise((resolve) =>
        client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
      );
      const subscription = await client.listen({ toolsListChanged: true });
      assert.equal(subscription.honoredFilter.toolsListChanged, true, JSON.stringify(subscription.honoredFilter));
      const before = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(!before.includes('add_input_action'), 'input_map is not in the default list');
      const r = await client.callTool({ name: 'manage_toolsets', arguments: { enable: ['input_map'] } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.equal(r.structuredContent.applied, true, JSON.stringify(r));
      await changed;
      const now = (await client.listTools({}, { cacheMode: 'refresh' })).tools.map((t) => t.name);
      assert.ok(now.includes('add_input_action'), JSON.stringify(now));
      await subscription.close();
    } finally {
      await client.close();
    }
  });
});

describe('TypeScript SDK 2026 client: run_tests as a task (the stand-in as Godot)', () => {
  let fixture, hangingFixture, server, hanging;

  before(async () => {
    // One server per project folder (the lease inside it): each its own copy.
    fixture = gutProject();
    hangingFixture = gutProject();
    const all = ['--toolsets', 'all'];
    server = await startHttp(fixture.project, fixture.state, all, { GODOT_BIN: STANDIN });
    // A Godot that never ends by itself (and ignores SIGTERM): only a kill stops it.
    hanging = await startHttp(hangingFixture.project, hangingFixture.state, all, {
      GODOT_BIN: STANDIN,
      GODOT_STANDIN_HANG: '1',
      GODOT_STANDIN_IGNORE_TERM: '1',
    });
  });

  after(async () => {
    await server?.stop();
    await hanging?.stop();
    fixture?.remove();
    hangingFixture?.remove();
  });

  test('a client that declares the tasks extension is answered with a task', async () => {
    const client = await connect2026(server, { extensions: { [TASKS]: {} } });
    try {
      await assert.rejects(client.callTool({ name: 'run_tests', arguments: { timeout_ms: 1500 } }), (e) => {
        assert.equal(e.code, 'UNSUPPORTED_RESULT_TYPE', `${e.code}: ${e.message}`);
        assert.equal(e.data?.resultType, 'task', JSON.stringify(e.data));
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test('run_tests as a task runs to completion: its result is run_tests\' own, named by the task\'s transaction', async () => {
    const raw = await rawTransport(server);
    const client = await connect2026(server);
    try {
      // The stand-in does not run GUT: like a run that never ends it is stopped at
      // timeout_ms, and run_tests reports the timeout.
      const id = await startRunTests(raw, { timeout_ms: 1500 });
      const task = await untilTerminal(raw, id);
      assert.equal(task.status, 'completed', JSON.stringify(task));
      assert.equal(task.result.structuredContent.transaction_id, id, JSON.stringify(task));
      assert.equal(task.result.structuredContent.outcome, 'timeout', JSON.stringify(task));
      const row = await journalRow(client, id);
      assert.equal(row.status, 'committed', JSON.stringify(row));
      assert.equal(row.operation, 'run_tests', JSON.stringify(row));
    } finally {
      await client.close();
      await raw.close();
    }
  });

  test('run_tests as a task is cancelled: tasks/cancel kills the launch, and the journal says so', async () => {
    const raw = await rawTransport(hanging);
    const client = await connect2026(hanging);
    try {
      const id = await startRunTests(raw, { timeout_ms: 600000 });
      assert.equal((await raw.request('tasks/get', { taskId: id })).result.status, 'working');
      const ack = await raw.request('tasks/cancel', { taskId: id });
      assert.ok(ack.result, JSON.stringify(ack));
      const task = await untilTerminal(raw, id);
      assert.equal(task.status, 'cancelled', JSON.stringify(task));
      const row = await journalRow(client, id);
      assert.equal(row.status, 'committed', JSON.stringify(row));
      assert.match(row.proof_summary, /stopped by the server/, JSON.stringify(row));
    } finally {
      await client.close();
      await raw.close();
    }
  });

  test('a client that does not declare the tasks extension gets run_tests\' result in the call', async () => {
    const client = await connect2026(server);
    try {
      const r = await client.callTool({ name: 'run_tests', arguments: { timeout_ms: 1500 } });
      assert.equal(r.structuredContent?.framework, 'gut', JSON.stringify(r));
      assert.equal(typeof r.structuredContent.transaction_id, 'string', JSON.stringify(r));
    } finally {
      await client.close();
    }
  });
});
