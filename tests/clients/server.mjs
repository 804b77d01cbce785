// The real `godot-mcp serve` for the client tests: a temp copy of godot_project/, its
// own state dir, and (over HTTP) the address the server prints on stderr once it
// accepts connections (no sleeps, no fixed port).
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The binary under test: GODOT_MCP_BIN (tests/clients/run.sh sets it). */
export const BIN =
  process.env.GODOT_MCP_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(REPO, 'target'), 'debug', 'godot-mcp');

/** The stand-in `godot` (crate godot-mcp-standin) built beside the binary: a real process
 * the server launches, journals and kills, as the Rust tests use it. */
export const STANDIN = join(dirname(BIN), 'godot-standin');

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

/**
 * tempProject() with GUT installed and imported and a tests folder, so run_tests
 * launches Godot (the stand-in) at once (as tests/http_tasks.rs's project).
 */
export function gutProject() {
  const fixture = tempProject();
  const at = (p) => join(fixture.project, p);
  mkdirSync(at('addons/gut'), { recursive: true });
  writeFileSync(at('addons/gut/gut_cmdln.gd'), 'extends SceneTree\n');
  mkdirSync(at('test'), { recursive: true });
  writeFileSync(at('test/test_a.gd'), 'extends GutTest\n');
  mkdirSync(at('.godot'), { recursive: true });
  writeFileSync(at('.godot/global_script_class_cache.cfg'), 'list=[{"class": &"GutTest"}]\n');
  return fixture;
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
 * Start `godot-mcp serve --http 127.0.0.1:0` with a bearer token (and `env` added to
 * its environment); resolves to `{ url, token, stop() }` once the listening line is
 * printed.
 */
export function startHttp(project, state, extra = [], env = {}) {
  const token = `clients-${process.pid}-${Date.now()}`;
  const child = spawn(BIN, serveArgs(project, ['--http', '127.0.0.1:0', ...extra]), {
    env: serverEnv(state, { GODOT_MCP_AUTH_TOKEN: token, ...env }),
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

/** The number of tools in the committed contract (every toolset): one snapshot a tool. */
export function contractToolCount() {
  return readdirSync(join(REPO, 'tests/snapshots/tools')).filter((f) => f.endsWith('.snap')).length;
}
