// The SFTP part of bench:ssh-keys (docs/performance.md "SSH keys"): POST /ssh-keys → the first
// successful SFTP login with that key, against the local stack's own sshd (deploy/local/up.sh,
// stack.json web.sftp; docs/decisions/0023-sftp.md), as a client sees it: the real `sftp -b -` in
// batch mode with the stack's known_hosts, tried again at once after each refusal until it logs in.
// Floor, in the same run and alternating: one login with a key that is already in place (what a
// login costs by itself), so the ratio says what the API, the queue and the key file add.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { benchConfig, freshBenchStore, processUrlOf } from './store.js';
import { discard, jobFinishedAt, loadAverage, ACCEPT, JSONAPI, PG_URL } from './report.js';
import type { BenchStacks } from './stacks.js';
import { freePort } from '../test/helpers/ports.js';
import { newKey, sftpBatch, sftpServerMissing, type ClientKey, type SftpServer } from '../test/helpers/sftp.js';
import { stackMissing } from '../test/helpers/stack.js';
import { buildApp } from '../src/app.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../src/provisioning/drivers.js';

/** The web server's name up.sh registers (STACK_WEB_NAME unset). */
const WEB = 'local';
/** The default plan allows 10 keys a package: its floor key and 9 timed ones. */
const TIMED_PER_PACKAGE = 9;
const LOGIN_LIMIT_MS = 30_000;

/** Why the SFTP part cannot run here (no stack, no sshd, not root), or null. */
export const sftpPartMissing = (): string | null => stackMissing() ?? sftpServerMissing();

export interface SftpLoginResult {
  engine: string;
  /** One login with a key in place, ms. */
  floor: number[];
  /** POST → the end of the first successful login, ms. */
  login: number[];
  /** POST → the job's finished_at (read after the login), ms. */
  job: number[];
  /** One refused try (the key not yet POSTed), ms. */
  refused: number[];
  /** sftp runs until the first success (1: the first try logged in). */
  tries: number[];
  /** Load averages at the start and the end of the timed part. */
  load: [string, string];
}

/** `pwd` over SFTP as `user` with `key`: whether it logged in, and the client's stderr. */
async function login(server: SftpServer, user: string, key: ClientKey): Promise<{ ok: boolean; stderr: string }> {
  const r = await sftpBatch(server, user, key, ['pwd']);
  return { ok: r.code === 0 && r.stdout.includes('Remote working directory: /'), stderr: r.stderr };
}

/** Tries to log in until it succeeds: the time it succeeded (performance.now()) and the tries. */
async function firstLogin(server: SftpServer, user: string, key: ClientKey, check: () => void): Promise<{ at: number; tries: number }> {
  const end = performance.now() + LOGIN_LIMIT_MS;
  for (let tries = 1; ; tries++) {
    const r = await login(server, user, key);
    if (r.ok) return { at: performance.now(), tries };
    // Only sshd's refusal of a key it does not know (yet) is worth another try.
    if (!/Permission denied \(publickey\)/.test(r.stderr)) throw new Error(`sftp as ${user}: ${r.stderr.trim()}`);
    if (performance.now() > end) throw new Error(`no SFTP login as ${user} within ${LOGIN_LIMIT_MS} ms after the POST (${tries} tries): ${r.stderr.trim()}`);
    check();
  }
}

/**
 * One engine: a fresh store, a stack registered in it (its sshd on port-base+20; rspamd off, not
 * needed here), the app on a free port with WEB_SERVER=local and the worker in its process (as
 * `serve` on one machine, the product's JOB_* defaults), then `keys` timed keys one at a time.
 */
export async function sftpLoginRun(engine: 'sqlite' | 'postgres', root: string, keys: number, stacks: BenchStacks, log: (s: string) => void): Promise<SftpLoginResult> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const stackDir = path.join(root, `sftp-${engine}`);
  const keyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-bench-sftp-keys-'));
  let app: FastifyInstance | null = null;
  let limiter: MemoryLimiter | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  try {
    const processUrl = (await processUrlOf(store, databaseUrl)).url;
    const up = await stacks.up(stackDir, { DATABASE_URL: processUrl, STACK_RSPAMD: 'off' });
    const stackJson = JSON.parse(await fs.readFile(path.join(stackDir, 'stack.json'), 'utf8'));
    const sftp = stackJson.web?.sftp as (SftpServer & { log: string }) | undefined;
    if (!sftp) throw new Error(`the stack runs no SFTP server: ${up.run.stdout}\n${up.run.stderr}`);
    const server: SftpServer = { host: sftp.host, port: sftp.port, known_hosts: sftp.known_hosts };

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const config = benchConfig(databaseUrl, base, { WEB_SERVER: WEB });
    limiter = new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter, logStream: discard() });
    await app.listen({ host: '127.0.0.1', port });
    drivers = buildDrivers({ config, store });
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    const admin = buildAdmin(serviceDeps(store, config));
    const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench SFTP', contact: { name: 'b', email: 'b@bench.example', phone: '+49 30 1234567' } });
    const { planId } = await admin.packages.createPlan({ name: 'bench sftp' });
    const { token } = await admin.customers.issueToken(contactId, 'bench');
    const headers = { authorization: `token ${token}`, accept: ACCEPT };

    /** POST /ssh-keys: when it was sent (Date.now() and performance.now()) and the job's URL. */
    const post = async (packageId: number, key: ClientKey) => {
      const sent = { wall: Date.now(), mono: performance.now() };
      const r = await fetch(`${base}/ssh-keys`, {
        method: 'POST',
        headers: { ...headers, 'content-type': JSONAPI },
        body: JSON.stringify({ data: { type: 'ssh-key', attributes: { package_id: String(packageId), public_key: key.pub } } }),
      });
      if (r.status !== 202) throw new Error(`POST /ssh-keys answered ${r.status}: ${await r.text()}`);
      return { sent, jobUrl: r.headers.get('content-location')! };
    };
    const check = () => stacks.check();

    const result: SftpLoginResult = { engine, floor: [], login: [], job: [], refused: [], tries: [], load: [loadAverage(), ''] };
    let pkg: { id: number; user: string; floorKey: ClientKey } | null = null;
    for (let i = 0; i < keys; i++) {
      check();
      if (i % TIMED_PER_PACKAGE === 0) {
        // Untimed: the package, its Linux user and home (made by its first key's job) and a key in place.
        const n = i / TIMED_PER_PACKAGE;
        const { packageId } = await admin.packages.createPackage({ customerId, planId, name: `s${n}`, linuxUser: `sftp_${n}` });
        pkg = { id: packageId, user: `sftp_${n}`, floorKey: await newKey(keyDir, `floor${n}`) };
        const p = await post(packageId, pkg.floorKey);
        await jobFinishedAt(p.jobUrl, headers, { limitMs: LOGIN_LIMIT_MS, pollMs: 20, check });
        await firstLogin(server, pkg.user, pkg.floorKey, check);
        if (i === 0) result.load[0] = loadAverage();
      }
      if (!pkg) throw new Error('no package');
      const key = await newKey(keyDir, `k${i}`); // outside the timed part
      // The loop's premise, checked: sshd refuses the key before its POST. How long a refusal takes
      // (client start, key exchange, the key offered) is how long the job has to beat the first try.
      const r0 = performance.now();
      const before = await login(server, pkg.user, key);
      if (before.ok || !/Permission denied \(publickey\)/.test(before.stderr)) throw new Error(`a key not yet POSTed: ${before.ok ? 'logged in' : before.stderr.trim()}`);
      result.refused.push(performance.now() - r0);
      const f0 = performance.now();
      const f = await login(server, pkg.user, pkg.floorKey);
      if (!f.ok) throw new Error(`the floor's login as ${pkg.user} failed: ${f.stderr.trim()}`);
      result.floor.push(performance.now() - f0);

      const p = await post(pkg.id, key);
      const first = await firstLogin(server, pkg.user, key, check);
      result.login.push(first.at - p.sent.mono);
      result.tries.push(first.tries);
      result.job.push((await jobFinishedAt(p.jobUrl, headers, { limitMs: LOGIN_LIMIT_MS, pollMs: 20, check })) - p.sent.wall);
      if ((i + 1) % 10 === 0) log(`${engine}: ${i + 1}/${keys} keys`);
    }
    result.load[1] = loadAverage();
    return result;
  } finally {
    await worker?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    if (stacks.has(stackDir)) await stacks.down(stackDir);
    await drop();
    await fs.rm(keyDir, { recursive: true, force: true });
  }
}
