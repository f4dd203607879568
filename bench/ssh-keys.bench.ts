// SSH keys benchmark (docs/performance.md "SSH keys"), on SQLite and, when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set, on PostgreSQL:
//
//   product: POST /ssh-keys over HTTP, then the job polled until done (the key file on the package's
//            web server holds the key): from sending the POST to the job's finished_at.
//   floor:   the same key file written directly (writeAuthorizedKeys with the package's keys).
//
// The time to the first successful SFTP login adds sshd's side; it is measured with the sshd of
// the local stack (deploy/local/up.sh), not here. BENCH_SSH_KEYS [40] keys, one at a time, floor
// and product alternating; a package per 10 keys (the default plan limit).
//
//   npm run bench:ssh-keys
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchHeader, fmt, jobFinishedAt, loadAverage, markdownTable, pct, runBench, ACCEPT, JSONAPI, PG_URL, LOG_LEVEL } from './report.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers } from '../src/provisioning/drivers.js';
import { WebServersService } from '../src/admin/web-servers.service.js';
import { writeAuthorizedKeys } from '../src/provisioning/web/ssh-keys.js';

const KEYS = Number(process.env.BENCH_SSH_KEYS ?? 40);
let interrupted = false;
process.on('SIGINT', () => (interrupted = true));

/** A fresh Ed25519 public key line. */
function keyLine(): string {
  const x = Buffer.from(crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(x)]).toString('base64')} bench`;
}

async function engine(name: string, url: (dir: string) => string, schema?: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-bench-ssh-'));
  const store = await openStore(url(dir), schema ? { schema } : {});
  try {
    await migrate(store);
    const config = loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1', RATE_LIMIT_MAX: '100000000', ERROR_BLOCK_MAX: '100000000', LOG_LEVEL, DNS_LISTEN: 'off', WEB_SERVER: 'web1' });
    const app = await buildApp(config, { store, limiter: new MemoryLimiter(config) });
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
    for (let i = 0; i < KEYS && !interrupted; i++) {
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
    await store.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

runBench(async () => {
  console.log(benchHeader('SSH keys'));
  const rows = [await engine('sqlite', (dir) => path.join(dir, 'bench.db'))];
  if (PG_URL) rows.push(await engine('postgres', () => PG_URL!, `bench_${crypto.randomBytes(4).toString('hex')}`));
  console.log(`${KEYS} keys, one at a time; load ${loadAverage()}\n`);
  console.log(markdownTable(['store', 'floor p50 ms (file write)', 'POST → job done p50 ms', 'p95 ms', 'p50 / floor'], rows, 1));
}, () => interrupted);
