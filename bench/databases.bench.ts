// Databases benchmark (docs/performance.md "Databases"), on SQLite and, when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL, against the MariaDB at
// BENCH_MARIADB_URL, TEST_MARIADB_URL or mysql://root@127.0.0.1:3306:
//
//   product: POST /databases over HTTP, then log in with the returned password (mysql2, into the
//            new database) until the login works: the time from sending the POST to the first
//            successful login.
//   floor:   the same server, one admin connection: CREATE DATABASE, CREATE USER … IDENTIFIED BY,
//            GRANT ALL, then the first successful login, timed the same way.
//
// Both are measured by the client (bench/databases-client.ts), a process of its own as a real API
// client is; this process holds the app and its worker only. A refused login is retried at once
// (BENCH_DB_POLL_MS=0), at most BENCH_DB_LOGIN_ATTEMPTS times and for 10 s.
//
// BENCH_DB_CREATES of each, one at a time, floor and product alternating (A/B/A/B) so that drift
// of the machine hits both. Target: product p50 < 300 ms and ≤ 3 × the floor's p50. Everything the
// bench creates on MariaDB starts with `bench_<random>_` and is dropped at the end, also after an
// error or Ctrl-C.
//
//   npm run bench:databases
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:databases
//
// Settings (environment): BENCH_DB_CREATES [50], BENCH_DB_WARMUP [5] (untimed runs of each first),
// BENCH_DB_POLL_MS [0] (0: the next login attempt as soon as one is refused; else the interval
// between the starts of two attempts), BENCH_DB_LOGIN_ATTEMPTS [2000], BENCH_DB_HTTP [http]
// (`fetch` sends the POST with fetch instead of node:http), BENCH_LOG_LEVEL [info],
// BENCH_JSON=1 prints the rows as JSON as well. The worker runs with the product's JOB_* defaults.
//
// BENCH_COMPARE=<dir>: a checkout of another commit (with node_modules, or a link to this one's)
// whose instance runs beside this tree's, on a store of its own: each timed step is a floor run
// and a product run of each tree, the order of the two trees alternating, so that both meet the
// same moments of the machine; the tables show its rows next to this tree's, and the paired
// difference of the two products, create by create.
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/
//   BENCH_COMPARE=/tmp/before BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:databases
import crypto from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import mysql from 'mysql2/promise';
import { THIS_APP_TREE, checkoutModule, loadAppTree, type AppTree } from './compare.js';
import { discard, fmt, markdownTable, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL } from './report.js';
import { now, type ClientSettings, type FloorTimes, type ProductTimes, type Reply, type Request } from './databases-client.js';
import type { Config } from '../src/config.js';
import { nowIso } from '../src/db/time.js';
import type { Store } from '../src/db/index.js';
import type { MemoryLimiter } from '../src/limits/limiter.js';
import type { DemoCustomer } from '../src/admin/demo.js';
import { DEFAULT_LEASE_MS, Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../src/provisioning/drivers.js';
import type { DatabaseDriver } from '../src/provisioning/databases/driver.js';
import { DatabaseServersRepository } from '../src/provisioning/databases/servers.repository.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CREATES = num('BENCH_DB_CREATES', 50);
const WARMUP = num('BENCH_DB_WARMUP', 5);
const POLL_MS = num('BENCH_DB_POLL_MS', 0);
const LOGIN_ATTEMPTS = num('BENCH_DB_LOGIN_ATTEMPTS', 2000);
const HTTP_CLIENT = process.env.BENCH_DB_HTTP === 'fetch' ? 'fetch' : 'http';
const COMPARE = process.env.BENCH_COMPARE ? path.resolve(process.env.BENCH_COMPARE) : null;
/** How often the client polls the job once the login works (its `done` time is read from finished_at). */
const JOB_POLL_MS = 20;
const LOGIN_LIMIT_MS = 10_000;
const MARIADB_URL = process.env.BENCH_MARIADB_URL ?? process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const BASE_URL = 'https://api.example.com';
const SERVER = 'bench-db';
/** Targets of the databases bench (docs/performance.md). */
const TARGET_P50_MS = 300;
const TARGET_X_FLOOR = 3;

/** Everything on MariaDB carries it: the package's Linux user (so its database names) and the floor's names. */
const PREFIX = `bench_${crypto.randomBytes(6).readUIntBE(0, 6).toString(36).padStart(8, '0').slice(-8)}`;

type EngineName = 'sqlite' | 'postgres';


/** Set by SIGINT/SIGTERM: the runs stop at the next step and the cleanup runs. */
let interrupted = false;
const checkInterrupted = () => {
  if (interrupted) throw new Error('interrupted');
};

// ---- MariaDB -----------------------------------------------------------------------------------

const mariadb = new URL(MARIADB_URL);

/** Drops every user and database starting with PREFIX_ (LIKE wildcards in it escaped). */
async function dropBenchObjects(): Promise<{ users: number; databases: number }> {
  const conn = await mysql.createConnection({ uri: MARIADB_URL });
  try {
    const like = `${PREFIX}_`.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';
    const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT User, Host FROM mysql.user WHERE User LIKE ?', [like]);
    for (const u of users) await conn.query('DROP USER IF EXISTS ?@?', [u.User, u.Host]);
    const [dbs] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [like]);
    for (const d of dbs) await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(String(d.name))}`);
    return { users: users.length, databases: dbs.length };
  } finally {
    await conn.end();
  }
}

/** major.minor of the server, as an operator registers it: '10.11'. */
async function serverVersion(): Promise<string> {
  const conn = await mysql.createConnection({ uri: MARIADB_URL });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    return /^(\d+\.\d+)/.exec(String(rows[0].v))![1];
  } finally {
    await conn.end();
  }
}

// ---- the instance ------------------------------------------------------------------------------

/** When the job's driver calls started and ended (absolute ms, `now()`), by database name. */
interface DriverMarks {
  createStart?: number;
  createEnd?: number;
  checkEnd?: number;
}

/** What an instance is built from: this tree's modules, or those of the BENCH_COMPARE checkout (its own migrations, app, worker and jobs). */
interface Tree extends AppTree {
  Worker: typeof Worker;
  workerSettings: typeof workerSettings;
  DEFAULT_LEASE_MS: typeof DEFAULT_LEASE_MS;
  buildJobs: typeof buildJobs;
  buildDrivers: typeof buildDrivers;
  closeDrivers: typeof closeDrivers;
  DatabaseServersRepository: typeof DatabaseServersRepository;
  nowIso: typeof nowIso;
}

const THIS_TREE: Tree = { ...THIS_APP_TREE, Worker, workerSettings, DEFAULT_LEASE_MS, buildJobs, buildDrivers, closeDrivers, DatabaseServersRepository, nowIso };

async function loadTree(dir: string): Promise<Tree> {
  const mod = checkoutModule(dir);
  const [app, worker, jobs, drivers, servers, time] = await Promise.all([
    loadAppTree(dir), mod('src/queue/worker.ts'), mod('src/resources/jobs.ts'), mod('src/provisioning/drivers.ts'), mod('src/provisioning/databases/servers.repository.ts'), mod('src/db/time.ts'),
  ]);
  return {
    ...app, Worker: worker.Worker, workerSettings: worker.workerSettings, DEFAULT_LEASE_MS: worker.DEFAULT_LEASE_MS, buildJobs: jobs.buildJobs,
    buildDrivers: drivers.buildDrivers, closeDrivers: drivers.closeDrivers, DatabaseServersRepository: servers.DatabaseServersRepository, nowIso: time.nowIso,
  };
}

interface Instance {
  engine: EngineName;
  tree: Tree;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  owner: DemoCustomer;
  packageId: string;
  version: string;
  marks: Map<string, DriverMarks>;
  close(): Promise<void>;
}

/**
 * The driver as the worker uses it, with the times of its `create` and `isCreated` calls noted
 * (the statements themselves are the driver's).
 */
function timedDriver(inner: DatabaseDriver, marks: Map<string, DriverMarks>): DatabaseDriver {
  const mark = (name: string) => marks.get(name) ?? marks.set(name, {}).get(name)!;
  return {
    ...inner,
    async create(server, db) {
      const m = mark(db.name);
      m.createStart ??= now();
      await inner.create(server, db);
      m.createEnd ??= now();
    },
    async isCreated(server, db) {
      const ok = await inner.isCreated(server, db);
      if (ok) mark(db.name).checkEnd ??= now();
      return ok;
    },
  };
}

/**
 * As `serve` builds it (src/cli/serve.ts), on a listening socket: the app, then the worker with
 * the application's jobs and drivers and the JOB_* defaults. The MariaDB is registered as the
 * default server of its version; the independent demo customer gets a package whose plan offers
 * it, with room for every create of the run.
 */
async function startInstance(engine: EngineName, version: string, tree: Tree = THIS_TREE): Promise<Instance> {
  const { freshBenchStore, benchConfig, buildApp, MemoryLimiter, makeAdmin, loadDemoData, Worker, workerSettings, buildJobs, buildDrivers, closeDrivers, DatabaseServersRepository, nowIso } = tree;
  const { store, databaseUrl, drop: cleanup } = await freshBenchStore(engine, PG_URL);
  const config = benchConfig(databaseUrl, BASE_URL);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  const marks = new Map<string, DriverMarks>();
  // Whatever was started, in reverse; the worker first, so no job creates anything after the cleanup.
  const close = async () => {
    await worker?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    await cleanup();
  };
  try {
    const admin = await makeAdmin(store, config);
    const { data } = await loadDemoData(admin, config.publicBaseUrl);
    const owner = data.customers.find((c) => c.role === 'customer')!;
    await new DatabaseServersRepository(store.db).add({
      name: SERVER,
      db_type: 'mariadb',
      version,
      url: MARIADB_URL,
      access_hosts: JSON.stringify(['%']),
      is_default: 1,
      is_dedicated: 0,
      created_at: nowIso(),
    });
    const { planId } = await admin.packages.createPlan({ name: `${PREFIX} plan`, maxDatabases: 2 * (CREATES + WARMUP), databaseVersions: [`mariadb-${version}`] });
    // Per engine and tree: the databases of another run must not be found existing.
    const linuxUser = `${PREFIX}_${engine[0]}${tree === THIS_TREE ? '' : 'c'}`;
    const { packageId } = await admin.packages.createPackage({ customerId: Number(owner.id), planId, name: linuxUser, linuxUser });

    limiter = new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter, logStream: discard() });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    if (!addr || typeof addr === 'string') throw new Error('no TCP address');
    const built = buildDrivers({ config, store });
    drivers = { ...built, databases: timedDriver(built.databases, marks) };
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    return { engine, tree, store, config, app, base: `http://127.0.0.1:${addr.port}`, owner, packageId: String(packageId), version, marks, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

// ---- the client --------------------------------------------------------------------------------

/** The client process (bench/databases-client.ts): one request at a time, answered by `seq`. */
class Client {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Error | null = null;

  constructor() {
    this.child = fork(fileURLToPath(new URL('./databases-client.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    this.child.on('message', (m: Reply) => {
      const w = this.waiting.get(m.seq);
      this.waiting.delete(m.seq);
      if (m.ok) w?.resolve(m.value);
      else w?.reject(new Error(m.error));
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`bench client exited (${signal ?? code})`);
      for (const w of this.waiting.values()) w.reject(this.exited);
      this.waiting.clear();
    });
  }

  call<T>(m: DistributiveOmit<Request, 'seq'>): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ ...m, seq });
    });
  }

  /**
   * How far the client's clock (timeOrigin + now()) is ahead of this process's, from the
   * quickest of `n` round trips, ± half of that round trip: `{ offset, rtt }`.
   */
  async clockOffset(n = 20): Promise<{ offset: number; rtt: number }> {
    let best = { offset: NaN, rtt: Infinity };
    for (let i = 0; i < n; i++) {
      const sent = now();
      const theirs = await this.call<number>({ op: 'clock' });
      const back = now();
      if (back - sent < best.rtt) best = { offset: theirs - (sent + back) / 2, rtt: back - sent };
    }
    return best;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    await this.call({ op: 'close' }).catch(() => {});
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await gone;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

// ---- the runs ----------------------------------------------------------------------------------

/** One product create, ms from sending the POST. */
interface ProductRun {
  /** 202 received. */
  post: number;
  /** The job's driver began `create` (the job's reads before it). */
  createStart: number;
  /** `create` returned: its statements ran. */
  createEnd: number;
  /** First successful login with the returned password. */
  login: number;
  /** `isCreated` confirmed the change. */
  checked: number;
  /** The job's finished_at (1 ms resolution, wall clock). */
  done: number;
  attempts: number;
}

/** One floor run, ms from sending the first statement. */
interface FloorRun {
  /** CREATE DATABASE, CREATE USER, GRANT returned. */
  statements: number;
  login: number;
  attempts: number;
}

/**
 * One product create by the client; the driver's marks (taken in this process) are moved onto the
 * client's clock with `offset`.
 */
async function productRun(h: Instance, client: Client, offset: number): Promise<ProductRun> {
  checkInterrupted();
  const t = await client.call<ProductTimes>({ op: 'product', req: { base: h.base, token: h.owner.token, packageId: h.packageId, version: h.version } });
  const m = h.marks.get(t.username) ?? {};
  h.marks.delete(t.username);
  const ours = (at: number | undefined) => (at ?? NaN) + offset - t.t0;
  return {
    post: t.post - t.t0,
    createStart: ours(m.createStart),
    createEnd: ours(m.createEnd),
    login: t.login - t.t0,
    checked: ours(m.checkEnd),
    done: t.finishedAt - t.wall0,
    attempts: t.attempts,
  };
}

let floorSeq = 0;

/** The bare statements on the client's admin connection for a new name, then the first login: as an operator would by hand. */
async function floorRun(client: Client): Promise<FloorRun> {
  checkInterrupted();
  const name = `${PREFIX}_f${++floorSeq}`;
  const password = crypto.randomBytes(15).toString('base64url').slice(0, 20);
  const t = await client.call<FloorTimes>({ op: 'floor', name, password });
  return { statements: t.statements - t.t0, login: t.login - t.t0, attempts: t.attempts };
}

interface EngineResult {
  engine: EngineName;
  product: ProductRun[];
  /** The BENCH_COMPARE checkout's product runs, in the same steps as `product`. */
  compared: ProductRun[] | null;
  floor: FloorRun[];
  loadBefore: number[];
  loadAfter: number[];
  seconds: number;
}

async function engineRun(engine: EngineName, version: string, client: Client, compare: Tree | null, log: (s: string) => void): Promise<EngineResult> {
  const instances: Instance[] = [];
  try {
    instances.push(await startInstance(engine, version));
    if (compare) instances.push(await startInstance(engine, version, compare));
    for (const h of instances) {
      const w = h.tree.workerSettings(h.config);
      const lease = w.leaseMs ?? (h.store.holdLock ? h.tree.DEFAULT_LEASE_MS.sessionLock : h.tree.DEFAULT_LEASE_MS.leaseOnly);
      const which = h.tree === THIS_TREE ? '' : ` (compared: ${COMPARE})`;
      log(`${engine}: app${which} on ${h.base}, worker concurrency ${w.concurrency}, poll ${w.pollMs} ms, lease ${lease} ms; package ${h.packageId} (${PREFIX})`);
    }
    // The client's clock against ours, for the driver's marks (the figures themselves are the client's own).
    const clock = await client.clockOffset();
    log(`${engine}: client clock ${fmt(clock.offset, 3)} ms ahead of the bench's (± ${fmt(clock.rtt / 2, 3)} ms)`);
    /** A floor run, then a product run of each instance, the instances' order alternating with `i`. */
    const step = async (i: number) => {
      const floor = await floorRun(client);
      const runs: ProductRun[] = [];
      for (const k of instances.map((_, k) => (k + i) % instances.length)) runs[k] = await productRun(instances[k], client, clock.offset);
      return { floor, runs };
    };
    for (let i = 0; i < WARMUP; i++) await step(i);
    const out: EngineResult = { engine, product: [], compared: compare ? [] : null, floor: [], loadBefore: os.loadavg(), loadAfter: [], seconds: 0 };
    const started = now();
    for (let i = 0; i < CREATES; i++) {
      const { floor, runs } = await step(i);
      out.floor.push(floor);
      out.product.push(runs[0]);
      out.compared?.push(runs[1]);
    }
    out.seconds = (now() - started) / 1000;
    out.loadAfter = os.loadavg();
    return out;
  } finally {
    for (const h of instances) await h.close();
    const dropped = await dropBenchObjects();
    log(`${engine}: dropped ${dropped.databases} databases and ${dropped.users} users named ${PREFIX}_*`);
  }
}

// ---- output ------------------------------------------------------------------------------------

function summaryRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const floor = r.floor.map((f) => f.login);
    const product = r.product.map((p) => p.login);
    const f50 = pct(floor, 50);
    const row = (what: string, xs: number[], attempts: number[]) => [
      r.engine, what, String(xs.length), fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1), fmt(Math.max(...xs), 1), fmt(mean(xs), 1), fmt(pct(xs, 50) / f50, 2), fmt(pct(attempts, 50)),
    ];
    return [
      row('floor: CREATE DATABASE + CREATE USER + GRANT → login', floor, r.floor.map((f) => f.attempts)),
      row('POST /databases → login', product, r.product.map((p) => p.attempts)),
      ...(r.compared ? [row('compared checkout: POST /databases → login', r.compared.map((p) => p.login), r.compared.map((p) => p.attempts))] : []),
    ];
  });
}

function stepRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const steps: [string, (p: ProductRun) => number][] = [
      ['202 received', (p) => p.post],
      ['job: driver create begins', (p) => p.createStart],
      ['job: create statements done', (p) => p.createEnd],
      ['first successful login', (p) => p.login],
      ['job: isCreated confirmed', (p) => p.checked],
      ['job done (finished_at, 1 ms resolution)', (p) => p.done],
    ];
    const floor: [string, (f: FloorRun) => number][] = [
      ['floor: statements done', (f) => f.statements],
      ['floor: first successful login', (f) => f.login],
    ];
    const compared = r.compared;
    return [
      ...steps.map(([s, f]) => {
        const xs = r.product.map(f);
        return [r.engine, s, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)];
      }),
      ...(compared
        ? steps.map(([s, f]) => {
            const xs = compared.map(f);
            return [r.engine, `compared checkout: ${s}`, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)];
          })
        : []),
      ...floor.map(([s, f]) => {
        const xs = r.floor.map(f);
        return [r.engine, s, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)];
      }),
    ];
  });
}

/** The paired differences of the two trees' products in the same steps (BENCH_COMPARE). */
function pairedRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const compared = r.compared;
    if (!compared) return [];
    const pairs: [string, (p: ProductRun) => number][] = [
      ['202 received', (p) => p.post],
      ['job: driver create begins', (p) => p.createStart],
      ['first successful login', (p) => p.login],
    ];
    return pairs.map(([what, f]) => {
      const d = r.product.map((p, i) => f(p) - f(compared[i]));
      const faster = d.filter((x) => x < 0).length;
      const ratio = pct(r.product.map(f), 50) / pct(compared.map(f), 50);
      return [r.engine, what, fmt(pct(d, 50), 2), `${faster} of ${d.length}`, fmt(ratio, 2)];
    });
  });
}

async function main() {
  const started = Date.now();
  console.log(
    `${benchHeader('databases')}, ` +
      `load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`,
  );
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.log(s);
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping after the current step and dropping ${PREFIX}_* (again to quit at once)`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const results: EngineResult[] = [];
  let version = '?';
  const client = new Client();
  try {
    version = await serverVersion();
    const settings: ClientSettings = { mariadbUrl: MARIADB_URL, pollMs: POLL_MS, maxAttempts: LOGIN_ATTEMPTS, limitMs: LOGIN_LIMIT_MS, jobPollMs: JOB_POLL_MS, publicBaseUrl: BASE_URL, httpClient: HTTP_CLIENT };
    await client.call({ op: 'init', settings });
    const attempts = POLL_MS > 0 ? `every ${POLL_MS} ms` : 'again as soon as one is refused';
    log(`MariaDB ${version} at ${mariadb.hostname}:${mariadb.port || 3306}; names ${PREFIX}_*; ${CREATES} creates of each after ${WARMUP} untimed; client in process ${client.pid} (POST by ${HTTP_CLIENT === 'http' ? 'node:http' : 'fetch'}), login attempts ${attempts} (at most ${LOGIN_ATTEMPTS}, ${LOGIN_LIMIT_MS / 1000} s)`);
    const compare = COMPARE ? await loadTree(COMPARE) : null;
    if (COMPARE) log(`compared checkout: ${COMPARE}`);
    for (const engine of (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as EngineName[]) results.push(await engineRun(engine, version, client, compare, log));
  } finally {
    // The client's admin connection first: the cleanup drops what it created.
    await client.close();
    // Also after an error before or between the engines' own cleanups: nothing of the run is left.
    const dropped = await dropBenchObjects();
    if (dropped.databases + dropped.users) log(`cleanup: dropped ${dropped.databases} databases and ${dropped.users} users named ${PREFIX}_*`);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  console.log();
  console.log(`1. Time to the first successful login (ms), ${CREATES} sequential creates each, floor and product alternating; MariaDB ${version}`);
  console.log(
    markdownTable(['engine', 'what', 'n', 'p50', 'p99', 'max', 'mean', '× floor p50', 'login attempts p50'], summaryRows(results), 2),
  );
  console.log(`   p99 of ${CREATES} samples is the ${Math.ceil(0.99 * CREATES)}th smallest (nearest rank)`);
  console.log();
  console.log('2. Where the product time goes (ms from sending the POST; floor: from its first statement)');
  console.log(markdownTable(['engine', 'step', 'p50', 'p99'], stepRows(results), 2));
  for (const r of results) {
    console.log(`   ${r.engine}: ${fmt(r.seconds, 1)} s, load average ${loadAverage(r.loadBefore)} → ${loadAverage(r.loadAfter)}`);
  }
  if (COMPARE) {
    console.log();
    console.log(`3. This tree's product against the compared checkout's (${COMPARE}), create by create (ms; negative: this tree is faster)`);
    console.log(markdownTable(['engine', 'what', 'median difference', 'this tree faster', 'p50 ratio'], pairedRows(results), 2));
  }
  console.log();
  const missed = results.flatMap((r) => {
    const p50 = pct(r.product.map((p) => p.login), 50);
    const f50 = pct(r.floor.map((f) => f.login), 50);
    return [
      ...(p50 >= TARGET_P50_MS ? [`${r.engine}: p50 ${fmt(p50, 1)} ms (< ${TARGET_P50_MS} ms)`] : []),
      ...(p50 > TARGET_X_FLOOR * f50 ? [`${r.engine}: ${fmt(p50 / f50, 2)} × floor (≤ ${TARGET_X_FLOOR} ×)`] : []),
    ];
  });
  console.log(missed.length ? `targets missed: ${missed.join('; ')}` : `targets met: POST → login p50 < ${TARGET_P50_MS} ms and ≤ ${TARGET_X_FLOOR} × the floor's p50`);
  if (process.env.BENCH_JSON) console.log(JSON.stringify(results, null, 1));
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}

runBench(main, () => interrupted);
