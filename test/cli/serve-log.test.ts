// `hostplane serve` writes its log to stdout without blocking requests
// (docs/decisions/0012-request-path.md: pino's asynchronous destination); the log is still complete
// when the server stops: one request line per request, then the shutdown lines.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { exited, freePort, newDatabase, runCli, spawnCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

describe.each(ENGINES)('serve on %s', (engine) => {
  it('logs every request, all of them still there after SIGTERM', { timeout: 120_000 }, async () => {
    const db = await newDatabase(engine);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: db.url, PUBLIC_BASE_URL: base };
    const serve = spawnCli(['serve'], { ...env, HOST: '127.0.0.1', PORT: String(port), DNS_LISTEN: 'off', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000' });
    const done = exited(serve);
    let early = false;
    void done.then(() => (early = true));
    try {
      await waitFor('serve to answer', async () => {
        if (early) throw new Error(`serve exited: ${(await done).stderr}`);
        return fetch(`${base}/healthz`).then((r) => r.ok, () => false);
      }, 60_000);
      const customer = JSON.parse((await runCli(['admin', 'customer', 'create', '--org', 'Log GmbH', '--name', 'Log Admin', '--email', 'log@example.com', '--json'], env)).stdout);
      const { token } = JSON.parse((await runCli(['admin', 'token', 'create', '--contact', String(customer.main_contact_id), '--json'], env)).stdout);

      // 200 requests, 20 at a time, each with its own request id.
      const ids = Array.from({ length: 200 }, (_, i) => `log-test-${i}`);
      for (let i = 0; i < ids.length; i += 20) {
        const answers = await Promise.all(
          ids.slice(i, i + 20).map((id) => fetch(`${base}/customers`, { headers: { authorization: `token ${token}`, 'x-request-id': id } })),
        );
        expect(answers.map((r) => r.status)).toEqual(Array(answers.length).fill(200));
        await Promise.all(answers.map((r) => r.arrayBuffer()));
      }
      serve.kill('SIGTERM');
      const r = await done;
      expect(r.code).toBe(0);

      const lines: { msg?: string; reqId?: string }[] = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      const logged = lines.filter((l) => l.msg === 'request' && String(l.reqId).startsWith('log-test-'));
      expect(logged.map((l) => l.reqId).sort()).toEqual([...ids].sort());
      for (const l of logged) expect(l).toMatchObject({ method: 'GET', url: '/customers', status: 200 });
      // The lines of the shutdown, written just before the process exits, come after the last request's.
      const last = lines.map((l) => l.msg).lastIndexOf('request');
      const stopping = lines.findIndex((l) => l.msg === 'shutting down');
      expect(stopping).toBeGreaterThan(last);
      expect(lines.findIndex((l) => l.msg === 'worker stopped')).toBeGreaterThan(stopping);
    } finally {
      serve.kill('SIGKILL');
      await done;
      await db.drop();
    }
  });
});
