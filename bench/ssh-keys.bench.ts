// SSH keys benchmark (docs/performance.md "SSH keys"), on SQLite and, when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set, on PostgreSQL:
//
//   product: POST /ssh-keys over HTTP, then the job polled until done (the key file on the package's
//            web server holds the key): from sending the POST to the job's finished_at.
//   floor:   the same key file written directly (writeAuthorizedKeys with the package's keys).
//
// BENCH_SSH_KEYS [40] keys, one at a time, floor and product alternating; a package per 10 keys
// (the default plan limit). Then, on the local stack (deploy/local/up.sh, its own sshd; root,
// caddy, php-fpm, openssh-server and -client; bench/ssh-keys-sftp.ts):
//
//   product: POST /ssh-keys, then `sftp -b -` with that key tried until it logs in: from sending
//            the POST to the end of the first successful login (the goal: p50 under 1 s).
//   floor:   one login with a key already in place, what a login costs by itself.
//
// BENCH_SFTP_KEYS [27] keys, one at a time, floor and product alternating; 9 a package after an
// untimed key in place (the floor's). BENCH_SSH_PARTS [file,sftp] picks the parts; BENCH_JSON=1
// prints the SFTP part's samples as JSON as well.
//
//   npm run bench:ssh-keys
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchHeader, discard, fmt, jobFinishedAt, loadAverage, markdownTable, mean, pct, runBench, ACCEPT, JSONAPI, PG_URL, LOG_LEVEL } from './report.js';
import { BenchStacks } from './stacks.js';
import { sftpLoginRun, sftpPartMissing, type SftpLoginResult } from './ssh-keys-sftp.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { freshBenchStore } from './store.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers } from '../src/provisioning/drivers.js';
import { WebServersService } from '../src/admin/web-servers.service.js';
import { writeAuthorizedKeys } from '../src/provisioning/web/ssh-keys.js';

const KEYS = Number(process.env.BENCH_SSH_KEYS ?? 40);
const SFTP_KEYS = Number(process.env.BENCH_SFTP_KEYS ?? 27);
const PARTS = (process.env.BENCH_SSH_PARTS ?? 'file,sftp').split(',').map((p) => p.trim());
/** The stacks of the SFTP part, and Ctrl-C for both parts (bench/stacks.ts). */
const stacks = new BenchStacks();

/** A fresh Ed25519 public key line. */
function keyLine(): string {
  const x = Buffer.from(crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(x)]).toString('base64')} bench`;
}

async function engine(name: 'sqlite' | 'postgres') {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-bench-ssh-'));
  // A fresh store, dropped at the end (a PostgreSQL schema too).
  const { store, drop } = await freshBenchStore(name, PG_URL);
  try {
    const config = loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1', RATE_LIMIT_MAX: '100000000', ERROR_BLOCK_MAX: '100000000', LOG_LEVEL, DNS_LISTEN: 'off', WEB_SERVER: 'web1' });
    const app = await buildApp(config, { store, limiter: new MemoryLimiter(config), logStream: discard() });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const drivers = buildDrivers({ config, store });
    const worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    const stateDir = path.join(dir, 'state');
    await new WebServersService(store.db).add({ name: 'web1', caddyAdmin: 'http://127.0.0.1:9', httpListen: '127.0.0.1:9', addresses: ['127.0.0.1'], homeRoot: path.join(dir, 'www'), stateDir });
    const admin = buildAdmin(serviceDeps(store, config));
    const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench', contact: { name: 'b', email: 'b@bench.example', phone: '+49 30 1234567' } });
    const { planId } = await admin.packages.createPlan({ name: 'bench' });
    const { token } = await admin.customers.issueToken(contactId, 'bench');
    const headers = { authorization: `token ${token}`, accept: ACCEPT };
    const product: number[] = [];
    const floor: number[] = [];
    let packageId = 0;
    const floorKeys: string[] = [];
    for (let i = 0; i < KEYS && !stacks.interrupted; i++) {
      if (i % 10 === 0) packageId = (await admin.packages.createPackage({ customerId, planId, name: `b${i}`, linuxUser: `bench_${i}` })).packageId;
      const line = keyLine();
      floorKeys.push(line);
      const f0 = performance.now();
      await writeAuthorizedKeys({ stateDir }, 'bench_floor', floorKeys.slice(-10));
      floor.push(performance.now() - f0);
      const sent = Date.now();
      const r = await fetch(`${base}/ssh-keys`, {
        method: 'POST',
        headers: { ...headers, 'content-type': JSONAPI },
        body: JSON.stringify({ data: { type: 'ssh-key', attributes: { package_id: String(packageId), public_key: line } } }),
      });
      if (r.status !== 202) throw new Error(`POST /ssh-keys answered ${r.status}: ${await r.text()}`);
      const done = await jobFinishedAt(r.headers.get('content-location')!.replace('http://127.0.0.1', base), headers, { limitMs: 30_000, pollMs: 2 });
      product.push(done - sent);
    }
    await worker.stop();
    await closeDrivers(drivers);
    await app.close();
    return [name, fmt(pct(floor, 50), 2), fmt(pct(product, 50)), fmt(pct(product, 95)), fmt(pct(product, 50) / Math.max(pct(floor, 50), 0.01), 0)];
  } finally {
    await drop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The SFTP part's row: floor and product p50/p95, their ratios, the job's p50, a refusal's p50, the tries. */
function sftpRow(r: SftpLoginResult): string[] {
  const ratio = pct(r.login, 50) / pct(r.floor, 50);
  return [
    r.engine, String(r.login.length), fmt(pct(r.floor, 50)), fmt(pct(r.floor, 95)), fmt(pct(r.login, 50)), fmt(pct(r.login, 95)),
    fmt(ratio, 1), fmt(pct(r.login, 95) / pct(r.floor, 50), 1), fmt(pct(r.job, 50)), fmt(pct(r.refused, 50)), `${fmt(mean(r.tries), 1)} (${Math.max(...r.tries)})`, `${r.load[0]} → ${r.load[1]}`,
  ];
}

runBench(async () => {
  console.log(`${benchHeader('SSH keys')}, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`);
  const engines = (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as ('sqlite' | 'postgres')[];
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.error(s);
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-bench-sftp-'));
  // sshd (as the package's user) and the stack's other users must enter the stack's dir.
  await fs.chmod(root, 0o755);
  const whyNot = PARTS.includes('sftp') ? sftpPartMissing() : null;
  if (whyNot) console.log(`(SFTP part skipped: ${whyNot})`);
  const fileRows: string[][] = [];
  const sftp: SftpLoginResult[] = [];
  await stacks.guard(root, log, async () => {
    if (PARTS.includes('file')) {
      const fileLoad = loadAverage();
      for (const e of engines) fileRows.push(await engine(e));
      console.log(`\nPOST → job done: ${KEYS} keys, one at a time; load ${fileLoad} → ${loadAverage()}\n`);
      console.log(markdownTable(['store', 'floor p50 ms (file write)', 'POST → job done p50 ms', 'p95 ms', 'p50 / floor'], fileRows, 1));
    }
    if (PARTS.includes('sftp') && !whyNot) for (const e of engines) sftp.push(await sftpLoginRun(e, root, SFTP_KEYS, stacks, log));
  });
  if (sftp.length) {
    const ssh = spawnSync('ssh', ['-V'], { encoding: 'utf8' }).stderr.trim();
    console.log(`\nPOST → first SFTP login: ${SFTP_KEYS} keys, one at a time, sftp -b - tried again at once after each refusal (${ssh}, the stack's sshd)\n`);
    console.log(markdownTable(
      ['store', 'n', 'floor p50 ms (1 login, key in place)', 'floor p95', 'POST → login p50 ms', 'p95 ms', 'p50 / floor', 'p95 / floor p50', 'job done p50 ms', 'refused try p50 ms', 'tries mean (max)', 'load (1/5/15 min) start → end'],
      sftp.map(sftpRow), 1,
    ));
  }
  if (process.env.BENCH_JSON) console.log(JSON.stringify({ file: fileRows, sftp }, null, 1));
}, () => stacks.interrupted);
