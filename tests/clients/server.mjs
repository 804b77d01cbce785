// The real `godot-mcp serve` for the client tests: a temp copy of godot_project/, its
// own state dir, and (over HTTP) the address the server prints on stderr once it
// accepts connections (no sleeps, no fixed port).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The binary under test: GODOT_MCP_BIN (tests/clients/run.sh sets it). */
export const BIN =
  process.env.GODOT_MCP_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(REPO, 'target'), 'debug', 'godot-mcp');

/** What the server prints once it listens (tests/http_support/mod.rs: LISTENING). */
const LISTENING = 'godot-mcp serve: listening on http://';

/**
 * A temp copy of godot_project/ (without Godot's generated .godot/ and the installed
 * add-on) and a state dir beside it. `remove()` deletes both.
 */
export function tempProject() {
  const root = mkdtempSync(join(tmpdir(), 'godot-mcp-clients-'));
  const project = join(root, 'project');
  cpSync(join(REPO, 'godot_project'), project, {
    recursive: true,
    filter: (src) => !['.godot', 'addons'].includes(basename(src)) || dirname(src) !== join(REPO, 'godot_project'),
  });
  return { root, project, state: join(root, 'state'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The environment of a server: nothing inherited that would change what it serves. */
export function serverEnv(state, extra = {}) {
  const env = { ...process.env, GODOT_MCP_STATE_DIR: state, GODOT_MCP_EDITOR_BRIDGE: 'off', ...extra };
  for (const k of ['GODOT_MCP_TOOLSETS', 'GODOT_MCP_HTTP', 'GODOT_MCP_AUTH_TOKEN', 'GODOT_MCP_PROJECT']) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** `serve --project <project>` and the extra arguments. */
export function serveArgs(project, extra = []) {
  return ['serve', '--project', project, ...extra];
}

/**
 * Start `godot-mcp serve --http 127.0.0.1:0` with a bearer token; resolves to
 * `{ url, token, stop() }` once the listening line is printed.
 */
export function startHttp(project, state, extra = []) {
  const token = `clients-${process.pid}-${Date.now()}`;
  const child = spawn(BIN, serveArgs(project, ['--http', '127.0.0.1:0', ...extra]), {
    env: serverEnv(state, { GODOT_MCP_AUTH_TOKEN: token }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolveStart, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      if (stderr.length < 1 << 20) stderr += `${line}\n`;
      if (line.startsWith(LISTENING)) {
        const url = `http://${line.slice(LISTENING.length)}`;
        resolveStart({
          url: new URL(url),
          token,
          stderr: () => stderr,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`godot-mcp exited (${code}) before listening:\n${stderr}`)));
    child.once('error', reject);
  });
}

/** The number of tools in the committed contract (every toolset). */
export function contractToolCount() {
  const snap = readFileSync(join(REPO, 'tests/snapshots/contract__tools.snap'), 'utf8');
  // An insta snapshot: a YAML header between `---` lines, then the JSON.
  const json = snap.slice(snap.indexOf('\n---\n') + 5);
  return JSON.parse(json).length;
}
