// How `hostplane serve` (`npm start`) starts, seen from the terminal and from a client: on a fresh
// checkout (no settings, the embedded default database) it makes ./data, loads the demo dataset,
// prints its tokens before the API answers (a client that polls the port finds them printed) and
// listens on loopback only, unless HOST says otherwise; a real deployment keeps 0.0.0.0.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { EnvSchema, loadConfig } from '../../src/config.js';
import { ENGINES } from '../helpers/app.js';
import { exited, freePort, newDatabase, spawnCli, type CliRun } from '../helpers/cli.js';
import { sleep, waitFor } from '../helpers/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSX = execFileSync(process.execPath, ['--input-type=module', '-e', 'console.log(import.meta.resolve("tsx"))'], { cwd: ROOT, encoding: 'utf8' }).trim();

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** `hostplane serve` started in `cwd`, as `npm start` runs it in a checkout, with only `env` as settings. */
function serveIn(cwd: string, env: Record<string, string>) {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(EnvSchema.properties)) delete clean[key];
  return spawn(process.execPath, ['--import', TSX, path.join(ROOT, 'src/main.ts'), 'serve'], { cwd, env: { ...clean, ...env } });
}

/** `npm start` in a new, empty checkout directory, on a free port, without a DNS server. */
async function serveFreshCheckout() {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-checkout-'));
  dirs.push(cwd);
  const port = await freePort();
  const child = serveIn(cwd, { PORT: String(port), DNS_LISTEN: 'off', LOG_LEVEL: 'info' });
  // Also when the test times out (its finally then never runs).
  onTestFinished(() => void child.kill('SIGKILL'));
  return { cwd, port, child, done: exited(child) };
}

/** GET /healthz at `host`:`port`: the status, or the error code of a connection that failed. */
const health = (host: string, port: number) =>
  fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
    (r) => r.status,
    (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
  );

/**
 * Polls /healthz on 127.0.0.1 as fast as a client would until it answers 200, and returns what the
 * process had printed on stdout by then, and a wait for its "hostplane ready" log line (after
 * which it stops cleanly on SIGTERM).
 */
async function firstAnswer(child: ReturnType<typeof spawn>, done: Promise<CliRun>, port: number) {
  let stdout = '';
  child.stdout!.on('data', (d) => (stdout += d));
  const ready = () => waitFor('the "hostplane ready" log line', async () => stdout.includes('"msg":"hostplane ready"'), 60_000);
  let early: CliRun | null = null;
  void done.then((r) => (early = r));
  const until = Date.now() + 90_000;
  for (;;) {
    if (early) throw new Error(`serve exited: ${(early as CliRun).stderr}`);
    if ((await health('127.0.0.1', port)) === 200) break;
    if (Date.now() > until) throw new Error(`serve did not answer; stdout so far: ${stdout}`);
    await sleep(5);
  }
  // Output written before the answer is in the pipe already; a moment for the stream to hand it over.
  await sleep(20);
  return { printed: stdout, ready };
}

describe('serve on a fresh checkout (npm start)', () => {
  it('makes ./data, prints the demo tokens before the API answers, and listens on 127.0.0.1 only', { timeout: 120_000 }, async () => {
    const { cwd, port, child, done } = await serveFreshCheckout();
    try {
      const { printed, ready } = await firstAnswer(child, done, port);
      expect(printed).toContain(`\nhostplane serves http://localhost:${port} (API docs: http://localhost:${port}/docs)\n`);
      expect(printed).toContain(`\nIt listens on 127.0.0.1:${port} only, for this machine; HOST=0.0.0.0 serves other machines too.\n`);
      expect(printed).toMatch(/\n {2}customer 10001 +reseller +package 1 +reseller-demo\.example +hp_[A-Za-z0-9]{40}\n/);
      expect(printed).toMatch(new RegExp(`\nTry it:\n\n {2}curl -s -H 'Authorization: token hp_[A-Za-z0-9]{40}' 'http://localhost:${port}/customers'\n`));
      expect(fs.existsSync(path.join(cwd, 'data/hostplane.db'))).toBe(true);
      // Another address of this machine (all of 127.0.0.0/8 is loopback) finds nothing listening.
      expect(await health('127.0.0.2', port)).toBe('ECONNREFUSED');
      await ready();
      child.kill('SIGTERM');
      expect((await done).code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await done;
    }
  });
});

describe('a stop asked for while serve starts', () => {
  it('SIGTERM before the API listens (the demo banner is printed first) stops it cleanly once started: exit 0, never killed half way', { timeout: 120_000 }, async () => {
    const { child, done } = await serveFreshCheckout();
    try {
      let stdout = '';
      child.stdout!.on('data', (d) => (stdout += d));
      await waitFor('the demo banner', async () => stdout.includes('Try it:'), 90_000);
      child.kill('SIGTERM');
      const r = await done;
      expect({ code: r.code, signal: child.signalCode }).toEqual({ code: 0, signal: null });
      expect(stdout).toContain('"msg":"hostplane ready"');
      expect(stdout).toContain('"msg":"shutting down"');
    } finally {
      child.kill('SIGKILL');
      await done;
    }
  });
});

describe.each(ENGINES)('serve with HOST set on %s', (engine) => {
  it('HOST=0.0.0.0 serves every address, also with the demo; the banner says nothing of loopback', { timeout: 120_000 }, async () => {
    const db = await newDatabase(engine);
    const port = await freePort();
    const child = spawnCli(['serve'], { DATABASE_URL: db.url, DEMO_DATA: 'on', HOST: '0.0.0.0', PORT: String(port), DNS_LISTEN: 'off', LOG_LEVEL: 'info' });
    const done = exited(child);
    try {
      const { printed, ready } = await firstAnswer(child, done, port);
      expect(printed).toContain('\nTry it:\n');
      expect(printed).not.toContain('It listens on');
      expect(await health('127.0.0.2', port)).toBe(200);
      await ready();
      child.kill('SIGTERM');
      expect((await done).code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await done;
      await db.drop();
    }
  });
});

describe('the default of HOST', () => {
  it('is 127.0.0.1 for the demo (DEMO_DATA on, or auto with the embedded database), else 0.0.0.0 as before', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/hostplane', DEMO_DATA: 'on' }).host).toBe('127.0.0.1');
    expect(loadConfig({ DEMO_DATA: 'off' }).host).toBe('0.0.0.0');
    expect(loadConfig({ DATABASE_URL: '/var/lib/hostplane/hostplane.db' }).host).toBe('0.0.0.0');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/hostplane' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });
});
