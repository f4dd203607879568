// `hostplane worker` (docs/operator-guide.md "The worker"): the worker command runs jobs from
// another process, woken by NOTIFY on PostgreSQL, holds its session lock there
// (docs/decisions/0005-dead-workers.md), and exits 0 on SIGTERM. With --web-server and
// WEB_SFTP_LOG it follows sshd's log and records each login by key (docs/decisions/0023-sftp.md).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENGINES, processUrl } from '../helpers/app.js';
import { useQueue } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

describe.each(ENGINES)('job queue on %s', (engine) => {
  const { ts, enqueue, settled } = useQueue(engine);

  /** `hostplane worker <args>` as a child on the suite's store, its output collected. */
  function startWorker(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker', ...args], {
      env: { ...process.env, DATABASE_URL: processUrl(ts), LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { text: '' };
    child.stdout.on('data', (d) => (output.text += d));
    child.stderr.on('data', (d) => (output.text += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, output, exited };
  }

  it('`hostplane worker` runs jobs from another process (woken by NOTIFY on PostgreSQL) and exits 0 on SIGTERM', async () => {
    // PostgreSQL: no polling to speak of, so only LISTEN/NOTIFY can bring the job over in time.
    const { child, output, exited } = startWorker([], { JOB_POLL_MS: engine === 'postgres' ? '600000' : '50' });
    const out = () => output.text;
    try {
      await waitFor('worker ready', async () => out().includes('hostplane worker ready'), 20_000);
      expect(out()).toContain(`"listen":${engine === 'postgres'}`);
      // PostgreSQL: its session lock shows it alive, so its lease can be long; SQLite: short leases
      // (docs/decisions/0005-dead-workers.md).
      expect(out()).toContain(`"leaseMs":${engine === 'postgres' ? 30000 : 3000},"lock":${engine === 'postgres'}`);
      // No definition for it (buildJobs): the other process marks it failed, which shows it ran it.
      const t0 = Date.now();
      const id = await enqueue({ jobType: 'email-address', action: 'update' });
      expect(await settled(id)).toMatchObject({ status: 'failed', error: 'no handler for email-address update' });
      expect(Date.now() - t0).toBeLessThan(2_000);
      const leaseOwner = out().match(/"worker":"([^"]+)"/)?.[1];
      expect(leaseOwner).toContain(`:${child.pid}:`);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out()).toContain('worker stopped');
  }, 30_000);

  it('`hostplane worker --web-server web9` runs only the jobs of web9; a general job and another server\'s stay for other workers', async () => {
    const { child, output, exited } = startWorker(['--web-server', 'web9'], { JOB_POLL_MS: '50' });
    try {
      await waitFor('worker ready', async () => output.text.includes('hostplane worker ready'), 20_000);
      const general = await enqueue({ jobType: 'email-address', action: 'update', objectId: 'g' });
      const other = await enqueue({ jobType: 'email-address', action: 'update', objectId: 'o', queue: 'web:web8' });
      const mine = await enqueue({ jobType: 'email-address', action: 'update', objectId: 'm', queue: 'web:web9' });
      expect(await settled(mine)).toMatchObject({ status: 'failed', error: 'no handler for email-address update' });
      // Several polls later the others are still untouched.
      await new Promise((r) => setTimeout(r, 300));
      const rows = await ts.store.db.selectFrom('queue_jobs').select(['id', 'status', 'attempts', 'lease_owner']).where('id', 'in', [general, other]).orderBy('id').execute();
      expect(rows).toEqual([
        { id: general, status: 'pending', attempts: 0, lease_owner: null },
        { id: other, status: 'pending', attempts: 0, lease_owner: null },
      ]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 30_000);

  it('`hostplane worker --web-server web9` with WEB_SFTP_LOG hands each login sshd logs to the SSH keys\' store; its reader ends with it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sftp-log-'));
    const log = path.join(dir, 'sshd.log');
    await fs.writeFile(log, '');
    const fp = 'SHA256:sOYcm6hiV7fdUqPxYE3sRfxnjQ513GRE7Bs2lo3n/vI';
    const { child, output, exited } = startWorker(['--web-server', 'web9'], { JOB_POLL_MS: '50', WEB_SFTP_LOG: log });
    const readers = async () => {
      const found: string[] = [];
      for (const pid of await fs.readdir('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        const cmd = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (cmd.split('\0').includes(log)) found.push(pid);
      }
      return found;
    };
    try {
      await waitFor('worker ready', async () => output.text.includes('hostplane worker ready'), 20_000);
      // tail starts at the end once it runs: login lines until one is seen (a user no package has: known false).
      await waitFor('the login in the worker\'s log', async () => {
        await fs.appendFile(log, `Accepted publickey for web_nobody from 127.0.0.1 port 4711 ssh2: ED25519 ${fp}\n`);
        return output.text.includes('SFTP login by key');
      }, 20_000);
      const line = output.text.split('\n').find((l) => l.includes('SFTP login by key'))!;
      expect(JSON.parse(line)).toMatchObject({ linuxUser: 'web_nobody', fingerprint: fp, known: false });
      expect((await readers()).length).toBe(1);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(await readers()).toEqual([]);
    await fs.rm(dir, { recursive: true, force: true });
  }, 40_000);
});
