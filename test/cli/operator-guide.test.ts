// The operator guide's "from nothing to a working token", run as written: its
// shell block, copied out of docs/operator-guide.md, runs in bash against a NEW database of each
// engine and a running `serve`, with `hostplane` on PATH as a wrapper script (as the guide's
// install makes it). It must end with a request that succeeds and print a token that works.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvSchema } from '../../src/config.js';
import { ENGINES } from '../helpers/app.js';
import { exited, freePort, newDatabase, spawnCli, type CliRun, type TestDb } from '../helpers/cli.js';
import { requirable } from '../helpers/required.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The first shell block after `heading` in the guide, as a reader copies it. */
function guideBlock(heading: string): string {
  const guide = fs.readFileSync(path.join(ROOT, 'docs/operator-guide.md'), 'utf8');
  const at = guide.indexOf(heading);
  expect(at, `"${heading}" in docs/operator-guide.md`).toBeGreaterThan(-1);
  const m = /```sh\n([\s\S]*?)```/.exec(guide.slice(at));
  return m![1];
}

const missing = ['bash', 'jq', 'curl'].filter((tool) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});

requirable(missing.length ? `${missing.join(', ')} not installed` : null)('operator guide: from nothing to a working token', () => {
  describe.concurrent.each(ENGINES)('on %s', { timeout: 120_000 }, (engine) => {
    let db: TestDb;
    let bin: string;
    let base: string;
    let serve: ReturnType<typeof spawnCli>;
    let serveExit: Promise<CliRun>;
    beforeAll(async () => {
      db = await newDatabase(engine);
      bin = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-bin-'));
      fs.writeFileSync(path.join(bin, 'hostplane'), `#!/bin/sh\nexec "${process.execPath}" --import tsx "${ROOT}/src/main.ts" "$@"\n`, { mode: 0o755 });
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      serve = spawnCli(['serve'], { DATABASE_URL: db.url, PUBLIC_BASE_URL: base, HOST: '127.0.0.1', PORT: String(port), DNS_LISTEN: 'off', LOG_LEVEL: 'warn' });
      let early: CliRun | null = null;
      serveExit = exited(serve);
      void serveExit.then((r) => (early = r));
      await waitFor('serve to answer', async () => {
        if (early) throw new Error(`serve exited: ${early.stderr}`);
        return fetch(`${base}/healthz`).then((r) => r.ok, () => false);
      }, 60_000);
    });
    afterAll(async () => {
      serve?.kill('SIGTERM');
      await serveExit;
      await db?.drop();
      if (bin) fs.rmSync(bin, { recursive: true, force: true });
    });

    it('the block runs as written and ends with a request that succeeds and a token that works', async () => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const key of Object.keys(EnvSchema.properties)) delete env[key];
      // What the guide says the block needs: the deployment's settings in the environment.
      Object.assign(env, { DATABASE_URL: db.url, PUBLIC_BASE_URL: base, PATH: `${bin}:${process.env.PATH}` });
      const run = await exited(spawn('bash', ['-e', '-o', 'pipefail', '-c', guideBlock('A new customer, from nothing to a working token')], { cwd: ROOT, env }));

      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const lines = run.stdout.split('\n');
      expect(lines).toEqual([
        expect.stringMatching(/ is up to date\.$/),
        expect.stringMatching(/^Created domain example\.com \(registered, in package [1-9][0-9]*\)\.$/),
        expect.any(String),
        expect.stringMatching(/^hp_[A-Za-z0-9]{40}$/),
        '',
      ]);
      const domain = JSON.parse(lines[2]);
      expect(domain).toMatchObject({
        data: { type: 'domain', id: 'example.com', attributes: { name: 'example.com', registration: { status: 'active' } } },
        links: { self: `${base}/domains/example.com` },
      });

      // The printed token is the new customer's.
      const r = await fetch(`${base}/customers`, { headers: { authorization: `token ${lines[3]}` } });
      expect(r.status).toBe(200);
      const body = await r.json();
      expect(body.data.map((c: any) => [c.id, c.attributes.organization, c.attributes.email])).toEqual([
        [domain.data.relationships.owner.data.id, 'Example GmbH', 'erika@example.com'],
      ]);
    });
  });
});
