// E-mail benchmark (docs/performance.md "E-mail addresses"), on SQLite and,
// when BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL, against the local stack's
// Dovecot (deploy/local/up.sh: private Caddy, Dovecot and Postfix on loopback ports, started and
// stopped by this bench; the mail part needs root):
//
//   1. POST /email-addresses (a mailbox, password generated) → the first successful IMAP LOGIN with
//      the returned password, tried every BENCH_MAIL_POLL_MS from the 202 on: ms from sending the
//      POST; also the 202, the job's doveadm lookup and its `done`. Baselines in the same run, one
//      of each per create (A/B/C, so drift of the machine hits all three):
//        existing: a LOGIN (new connection) of a mailbox that exists and was logged in to before:
//                  what Dovecot's SQL lookup and bcrypt verify cost, the floor of any login;
//        row:      a {BLF-CRYPT} hash made here (bcryptjs cost 10, as the API does), the directory
//                  row INSERTed directly, then the first LOGIN: what writing the row by hand costs.
//   2. IMAP logins per second (BENCH_MAIL_CLIENTS concurrent clients, each doing connect, LOGIN,
//      LOGOUT in a loop for BENCH_MAIL_SECONDS over BENCH_MAIL_SAMPLE addresses) with
//      BENCH_MAIL_SMALL mailboxes in the directory, then BENCH_MAIL_DIRECTORY, then SMALL again
//      (A/B/A): the ratio shows what the directory's size costs (Dovecot asks by primary key).
//      The bulk rows are INSERTed straight into mail_users and mail_domains, all with ONE shared
//      bcrypt hash: hashing 100,000 passwords at cost 10 would take over an hour. Every address
//      logged in to was logged in to once before (its mail home exists). Then the small directory
//      with a cheap scheme ({SHA512-CRYPT} from `openssl passwd -6`, and {PLAIN}): bcrypt's share.
//      Beside logins/s, which a busy machine shakes, the CPU Dovecot's processes used per login
//      (/proc: its master's reaped children and the live ones), how busy its single auth process
//      was, the CPU of PostgreSQL's server processes for the mail servers' connections, and the
//      passdb query alone, timed from this process at each size, with its plan.
//   Part 2 runs first, so part 1 sees a directory of BENCH_MAIL_SMALL mailboxes plus its own.
//   3. Submission with DKIM signing against rspamd on static maps, last (bench/email-submission.ts).
//
// Each engine gets its own instance: a fresh store, a fresh stack registered in it (its mail server
// `local` is the default), an app listening on the port Dovecot reports logins to (HOSTPLANE_URL)
// with the worker as `serve` runs it, one customer with a package on a plan with room for every
// create and a presence domain. The stacks are stopped with down.sh --purge at the end, also after
// an error or Ctrl-C; on PostgreSQL the read-only role up.sh made goes too.
//
//   npm run bench:email
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:email
//
// Settings (environment): BENCH_MAIL_CREATES [50], BENCH_MAIL_WARMUP [3] (untimed runs of each
// first), BENCH_MAIL_POLL_MS [5], BENCH_MAIL_SMALL [100], BENCH_MAIL_DIRECTORY [100000],
// BENCH_MAIL_CLIENTS [8,16], BENCH_MAIL_SECONDS [5], BENCH_MAIL_SAMPLE [50], BENCH_MAIL_CHEAP [1]
// (0 skips the cheap-scheme runs), BENCH_LOG_LEVEL [info], BENCH_JSON=1 prints the samples as JSON
// as well. Needs root, caddy, dovecot, postfix, setpriv, curl, jq (psql on PostgreSQL) as up.sh
// does; the stacks and the SQLite store go under TMPDIR, whose directories the users mail, dovecot
// and postfix must be able to enter.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { benchConfig, freshBenchStore, processUrlOf } from './store.js';
import { discard, fmt, markdownTable, sleep, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL, ACCEPT, JSONAPI, jobFinishedAt } from './report.js';
import { freePort } from '../test/helpers/ports.js';
import { ImapClient } from '../test/helpers/imap.js';
import { BenchStacks } from './stacks.js';
import { buildApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import type { Store } from '../src/db/index.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../src/provisioning/drivers.js';
import type { MailDriver } from '../src/provisioning/mail/driver.js';
import { blfCrypt } from '../src/resources/email-addresses/email-addresses.service.js';
import { MailDirectoryRepository } from '../src/resources/email-addresses/email-addresses.mail-directory.repository.js';
import { submissionBench, submissionReport, type SubmitResult } from './email-submission.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CREATES = num('BENCH_MAIL_CREATES', 50);
const WARMUP = num('BENCH_MAIL_WARMUP', 3);
const POLL_MS = num('BENCH_MAIL_POLL_MS', 5);
const SMALL = num('BENCH_MAIL_SMALL', 100);
const DIRECTORY = num('BENCH_MAIL_DIRECTORY', 100_000);
const CLIENTS = (process.env.BENCH_MAIL_CLIENTS ?? '8,16').split(',').map(Number).filter((n) => n > 0);
const SECONDS = num('BENCH_MAIL_SECONDS', 5);
const SAMPLE = num('BENCH_MAIL_SAMPLE', 50);
const CHEAP = num('BENCH_MAIL_CHEAP', 1) > 0;
/** Timed passdb queries from this process at each size (after a tenth as many untimed). */
const LOOKUPS = 1000;
/** How often the client polls a job once the login works (its `done` time is read from finished_at). */
const JOB_POLL_MS = 20;
const LOGIN_LIMIT_MS = 30_000;
/** The presence domain of the API's mailboxes (part 1). */
const DOMAIN = 'bench-mail.example';
/** The directory rows of part 2 go into this many domains: the SMALL ones under .bench-dir.example, the bulk under .bench-bulk.example. */
const DIR_DOMAINS = 100;
const QUOTA_BYTES = 1024 * 1024 * 1024;
/** INSERT batch of the bulk rows (5 parameters each: under SQLite's 32,766). */
const BATCH = 2000;

type EngineName = 'sqlite' | 'postgres';

/** The stacks of this run, and Ctrl-C (bench/stacks.ts). */
const stacks = new BenchStacks();
const checkInterrupted = () => stacks.check();

// ---- the local stack ---------------------------------------------------------------------------

/** up.sh on a free port-base, Dovecot reporting logins to `hostplaneUrl`: the stack's IMAP address. */
async function stackUp(dir: string, databaseUrl: string, hostplaneUrl: string): Promise<string> {
  const { run } = await stacks.up(dir, { DATABASE_URL: databaseUrl, HOSTPLANE_URL: hostplaneUrl });
  const stack = JSON.parse(fs.readFileSync(path.join(dir, 'stack.json'), 'utf8')) as { mail?: { imap: string } };
  if (!stack.mail) {
    const why = /Mail +not started: (.*)/.exec(run.stdout)?.[1] ?? 'see its output';
    throw new Error(`up.sh started no mail servers: ${why}`);
  }
  return stack.mail.imap;
}

// ---- IMAP --------------------------------------------------------------------------------------

/** One connect + LOGIN (+ LOGOUT, untimed): the tagged status and when it arrived (performance.now()). */
async function login(imap: string, user: string, password: string): Promise<{ status: string; at: number }> {
  const c = await ImapClient.connect(imap);
  try {
    const r = await c.login(user, password);
    return { status: r.status, at: performance.now() };
  } finally {
    await c.logout();
  }
}

/**
 * Logs in every POLL_MS (from the start of one attempt to the next) until it works: when it did
 * and the number of attempts. A refusal (NO) is "not there yet".
 */
async function firstLogin(imap: string, user: string, password: string): Promise<{ at: number; attempts: number }> {
  const end = performance.now() + LOGIN_LIMIT_MS;
  for (let attempts = 1; ; attempts++) {
    const started = performance.now();
    const r = await login(imap, user, password);
    if (r.status === 'OK') return { at: r.at, attempts };
    if (r.status !== 'NO') throw new Error(`IMAP LOGIN ${user}: ${r.status}`);
    if (performance.now() > end) throw new Error(`no IMAP login as ${user} within ${LOGIN_LIMIT_MS} ms`);
    checkInterrupted();
    await sleep(Math.max(0, started + POLL_MS - performance.now()));
  }
}

interface LoadRun {
  /** Mailboxes in the directory (count of mail_users) and the scheme of the addresses logged in to. */
  mailboxes: number;
  scheme: string;
  /** 'A1', 'B', 'A2' (the A/B/A of part 2), or 'cheap'. */
  phase: string;
  clients: number;
  seconds: number;
  ok: number;
  /** LOGIN answered NO, or a connection failed (the first such error's message in `firstError`). */
  failed: number;
  firstError: string | null;
  /** connect → tagged OK of LOGIN, ms. */
  latency: number[];
  /** Event-loop utilisation of this process (the clients and the app Dovecot reports to). */
  elu: number;
  /** CPU seconds of all of Dovecot's processes over the run, and of its `auth` process alone. */
  dovecotCpu: number;
  authCpu: number;
  /** PostgreSQL: CPU seconds of the server processes of Dovecot's and Postfix's connections (NaN on SQLite: the lookups run inside Dovecot). */
  dbCpu: number;
}

/**
 * `clients` concurrent loops of connect, LOGIN, LOGOUT for `seconds`, over `addresses` in turn
 * (all with `password`). Logins/s is the successful cycles over the whole time, the tail included.
 */
async function loginLoad(
  h: Instance, addresses: string[], password: string, clients: number, seconds: number,
): Promise<Omit<LoadRun, 'mailboxes' | 'scheme' | 'phase'>> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstError: string | null = null;
  const latency: number[] = [];
  const fail = (why: string) => {
    failed++;
    firstError ??= why;
  };
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = dovecotCpu(h.dovecotPid);
  const db0 = await readerCpu(h);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end && !stacks.interrupted) {
      const user = addresses[next++ % addresses.length];
      const started = performance.now();
      try {
        const r = await login(h.imap, user, password);
        if (r.status === 'OK') {
          ok++;
          latency.push(r.at - started);
        } else fail(`LOGIN ${user}: ${r.status}`);
      } catch (err) {
        fail((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  const elapsed = performance.now() - t0;
  const cpu1 = dovecotCpu(h.dovecotPid);
  const db1 = await readerCpu(h);
  checkInterrupted();
  return {
    clients, seconds: elapsed / 1000, ok, failed, firstError, latency, elu: performance.eventLoopUtilization(elu0).utilization,
    dovecotCpu: cpu1.total - cpu0.total, authCpu: cpu1.auth - cpu0.auth, dbCpu: cpuDelta(db0, db1),
  };
}

/** Every address logs in once (`clients` at a time), so its mail home exists; throws on any failure. */
async function loginEach(imap: string, addresses: string[], password: string, clients: number): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < addresses.length) {
      checkInterrupted();
      const user = addresses[next++];
      const r = await login(imap, user, password);
      if (r.status !== 'OK') throw new Error(`IMAP LOGIN ${user} with the directory's shared password: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
}

/** Clock ticks per second of /proc's CPU times. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The fields of /proc/<pid>/stat after the command (field 3, the state, is [0]), or null when it is gone. */
function procStat(pid: number | string): string[] | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU seconds Dovecot has used so far: its master's children that ended (the master's cutime and
 * cstime: it waits for them) plus those alive now; `auth` is its auth process alone (not the
 * auth workers, `auth -w`), where the passdb runs unless the SQL driver blocks.
 */
function dovecotCpu(masterPid: number): { total: number; auth: number } {
  const master = procStat(masterPid);
  if (!master) return { total: NaN, auth: NaN };
  // Fields 14-17 (utime, stime, cutime, cstime) are [11]..[14]; the parent pid, field 4, is [1].
  let total = Number(master[13]) + Number(master[14]);
  let auth = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const st = procStat(pid);
    if (!st || Number(st[1]) !== masterPid) continue;
    const ticks = Number(st[11]) + Number(st[12]);
    total += ticks;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/[\0\s]+$/, '');
    } catch {
      continue;
    }
    if (/\/auth$/.test(cmd)) auth += ticks;
  }
  return { total: total / CLK_TCK, auth: auth / CLK_TCK };
}

/**
 * CPU seconds so far of each server process of the reader role's connections (PostgreSQL), by pid:
 * /proc/<pid>/schedstat (ns; a lookup takes far less than the 10 ms ticks of /proc/<pid>/stat).
 */
async function readerCpu(h: Instance): Promise<Map<number, number> | null> {
  if (!h.reader) return null;
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where usename = ${h.reader}`.execute(h.store.db);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(Number(pid), Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** What the connections alive at `b` used since `a` (a connection opened meanwhile counts whole). */
function cpuDelta(a: Map<number, number> | null, b: Map<number, number> | null): number {
  if (!a || !b) return NaN;
  let sum = 0;
  for (const [pid, s] of b) sum += s - (a.get(pid) ?? 0);
  return sum;
}

// ---- the instance ------------------------------------------------------------------------------

interface Instance {
  engine: EngineName;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  imap: string;
  /** Dovecot's master process (its CPU times cover the processes it started). */
  dovecotPid: number;
  /** PostgreSQL: the read-only role Dovecot and Postfix connect as; null on SQLite. */
  reader: string | null;
  token: string;
  /** When the job's doveadm lookup first found each address (performance.now()). */
  found: Map<string, number>;
  close(): Promise<void>;
}

/** The mail driver as the worker uses it, with the time its `authenticates` first said yes noted. */
function timedMail(inner: MailDriver, found: Map<string, number>): MailDriver {
  return {
    ...inner,
    async authenticates(server, address) {
      const ok = await inner.authenticates(server, address);
      if (ok && !found.has(address)) found.set(address, performance.now());
      return ok;
    },
  };
}

/** The read-only role up.sh makes on PostgreSQL for the store's schema (deploy/local/up.sh `reader`). */
function readerRole(databaseUrl: string, schema: string): string {
  const name = `hostplane_mail_${decodeURIComponent(new URL(databaseUrl).pathname.slice(1))}_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (name.length <= 63) return name;
  return `${name.slice(0, 54)}_${crypto.createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}

/**
 * As `serve` builds it (src/cli/serve.ts), on the free port Dovecot reports logins to: the app,
 * then the worker with the application's jobs and drivers and the JOB_* defaults. The stack is up
 * and registered, the customer's package and domain made.
 */
async function startInstance(engine: EngineName, root: string): Promise<Instance> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const stackDir = path.join(root, engine);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  let schema: string | null = null;
  // Whatever was started, in reverse; the worker first, so no job asks a stopped Dovecot.
  const close = async () => {
    await worker?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    if (stacks.has(stackDir)) await stacks.down(stackDir);
    if (schema) {
      // Dovecot and Postfix are gone, so are their sessions: the role up.sh made can go.
      const reader = readerRole(databaseUrl, schema);
      await sql`drop owned by ${sql.id(reader)}`.execute(store.db).catch(() => undefined);
      await sql`drop role if exists ${sql.id(reader)}`.execute(store.db).catch((e) => console.error(`drop role ${reader}: ${(e as Error).message}`));
    }
    await drop();
  };
  try {
    // The CLI up.sh runs reaches this store: the schema of a PostgreSQL store goes into its URL.
    let processUrl: string;
    ({ url: processUrl, schema } = await processUrlOf(store, databaseUrl));
    // Dovecot reports every login to the app (application passwords' last_used_at): it listens there.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const imap = await stackUp(stackDir, processUrl, base);

      const config = benchConfig(databaseUrl, base);
    limiter = new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter, logStream: discard() });
    await app.listen({ host: '127.0.0.1', port });

    const admin = buildAdmin(serviceDeps(store, config));
    const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench AG', contact: { name: 'bench', email: 'admin@bench.example', phone: '+49 30 1234567' } });
    const { planId } = await admin.packages.createPlan({ name: 'bench plan', maxEmailAddresses: 2 * (CREATES + WARMUP) + 10 });
    const { packageId } = await admin.packages.createPackage({ customerId, planId, name: 'bench', linuxUser: 'mail_bench' });
    await admin.domains.createDomain({ name: DOMAIN, customerId, packageId, registered: true });
    const { token } = await admin.customers.issueToken(contactId, 'bench');

    const built = buildDrivers({ config, store });
    const found = new Map<string, number>();
    drivers = { ...built, mail: timedMail(built.mail, found) };
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    const dovecotPid = Number(fs.readFileSync(path.join(stackDir, 'mail', 'run', 'master.pid'), 'utf8').trim());
    const reader = schema ? readerRole(databaseUrl, schema) : null;
    return { engine, store, config, app, base, imap, dovecotPid, reader, token, found, close };
  } catch (err) {
    await close().catch((e) => console.error(`cleanup after a failed start: ${(e as Error).message}`));
    throw err;
  }
}

// ---- 1. create → first login -------------------------------------------------------------------

/** One product create, ms from sending the POST. */
interface ProductRun {
  /** 202 received (the directory row is committed by then). */
  post: number;
  /** First successful LOGIN with the returned password. */
  login: number;
  /** The job's doveadm lookup found the mailbox. */
  found: number;
  /** The job's finished_at (1 ms resolution, wall clock). */
  done: number;
  attempts: number;
}

/** A row written by hand, ms from the start: hashed, committed, first successful LOGIN. */
interface RowRun {
  hash: number;
  row: number;
  login: number;
  attempts: number;
}

const headers = (h: Instance, body = false): Record<string, string> => ({
  authorization: `token ${h.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

let seq = 0;

async function productRun(h: Instance): Promise<ProductRun> {
  checkInterrupted();
  const address = `m${++seq}@${DOMAIN}`;
  const wall0 = Date.now();
  const t0 = performance.now();
  const res = await fetch(`${h.base}/email-addresses`, {
    method: 'POST',
    headers: headers(h, true),
    body: JSON.stringify({ data: { type: 'email-address', attributes: { address, address_type: 'mailbox' } } }),
  });
  const body = (await res.json()) as { data?: { attributes: { address_ace: string; password: string } } };
  const t202 = performance.now();
  const jobUrl = res.headers.get('content-location');
  if (res.status !== 202 || !body.data?.attributes.password || !jobUrl) throw new Error(`POST /email-addresses on ${h.engine}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  const { address_ace: user, password } = body.data.attributes;
  const first = await firstLogin(h.imap, user, password);
  // The job has to finish before the next run starts.
  const finishedAt = await jobFinishedAt(jobUrl, headers(h), { limitMs: LOGIN_LIMIT_MS, pollMs: JOB_POLL_MS, check: checkInterrupted });
  const found = h.found.get(user) ?? NaN;
  h.found.delete(user);
  return { post: t202 - t0, login: first.at - t0, found: found - t0, done: finishedAt - wall0, attempts: first.attempts };
}

/** The floor of a new mailbox: its hash as the API makes it, the directory row INSERTed in one transaction, the first LOGIN. */
async function rowRun(h: Instance): Promise<RowRun> {
  checkInterrupted();
  const address = `f${++seq}@${DOMAIN}`;
  const password = crypto.randomBytes(15).toString('base64url');
  const t0 = performance.now();
  const hash = await blfCrypt(password);
  const tHash = performance.now();
  await h.store.db.transaction().execute(async (trx) => {
    const dir = new MailDirectoryRepository(trx);
    await dir.addDomain(DOMAIN, STACK_SERVER);
    await dir.addUser({ address, domain: DOMAIN, passwordHash: hash, quotaBytes: QUOTA_BYTES, recipientsPerHour: 500, server: STACK_SERVER });
  });
  const tRow = performance.now();
  const first = await firstLogin(h.imap, address, password);
  return { hash: tHash - t0, row: tRow - t0, login: first.at - t0, attempts: first.attempts };
}

/** The floor of any login: a new connection and LOGIN of a mailbox logged in to before. */
async function existingRun(h: Instance, user: string, password: string): Promise<number> {
  checkInterrupted();
  const t0 = performance.now();
  const r = await login(h.imap, user, password);
  if (r.status !== 'OK') throw new Error(`IMAP LOGIN of the existing ${user}: ${r.status}`);
  return r.at - t0;
}

// ---- 2. the directory --------------------------------------------------------------------------

/** The name up.sh registers its mail server under: its Dovecot reads only rows of that server. */
const STACK_SERVER = 'local';
const smallAddress = (i: number) => `s${i}@d${i % DIR_DOMAINS}.bench-dir.example`;
const bulkAddress = (i: number) => `u${i}@d${i % DIR_DOMAINS}.bench-bulk.example`;

/** Rows `from` ≤ i < `to` of `address`, all with the one `hash`, in batches; their domains first. */
async function insertRows(store: Store, address: (i: number) => string, from: number, to: number, hash: string): Promise<void> {
  const domainOf = (a: string) => a.slice(a.indexOf('@') + 1);
  const domains = [...new Set(Array.from({ length: Math.min(DIR_DOMAINS, to - from) }, (_, k) => domainOf(address(from + k))))];
  if (domains.length) await store.db.insertInto('mail_domains').values(domains.map((domain) => ({ domain, server: STACK_SERVER }))).onConflict((oc) => oc.column('domain').doNothing()).execute();
  for (let i = from; i < to; i += BATCH) {
    checkInterrupted();
    const rows = [];
    for (let j = i; j < Math.min(to, i + BATCH); j++) {
      const a = address(j);
      rows.push({ address: a, domain: domainOf(a), password_hash: hash, quota_bytes: QUOTA_BYTES, active: 1 as const, server: STACK_SERVER });
    }
    await store.db.insertInto('mail_users').values(rows).execute();
  }
}

const mailboxCount = async (store: Store) => Number((await store.db.selectFrom('mail_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/** PostgreSQL: fresh statistics after a bulk change (as autovacuum would soon make them). */
async function analyze(h: Instance): Promise<void> {
  if (h.engine === 'postgres') await sql`analyze mail_users`.execute(h.store.db);
}

/** `{SHA512-CRYPT}$6$…` of `password` (openssl passwd -6), or null without openssl. */
function sha512Crypt(password: string): string | null {
  const r = spawnSync('openssl', ['passwd', '-6', '-stdin'], { input: `${password}\n`, encoding: 'utf8' });
  const hash = r.status === 0 ? r.stdout.trim() : '';
  return hash.startsWith('$6$') ? `{SHA512-CRYPT}${hash}` : null;
}

/**
 * The passdb's password_query (src/node/render/dovecot-sql.ts) for `addresses` in turn, `n`
 * times one after the other from this process: µs each, round trip included.
 */
async function lookupTimes(h: Instance, addresses: string[], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = addresses[i % addresses.length];
    const t = performance.now();
    const r = await sql`select address as "user", password_hash as password from mail_users where address = ${a} and active = 1`.execute(h.store.db);
    out.push((performance.now() - t) * 1000);
    if (r.rows.length !== 1) throw new Error(`the passdb query found ${r.rows.length} rows for ${a}`);
  }
  return out;
}

/** How the engine runs that query: `Index Scan using mail_users_pkey on mail_users` or SQLite's `SEARCH mail_users USING INDEX …`. */
async function lookupPlan(h: Instance, address: string): Promise<string> {
  const q = sql`select address as "user", password_hash as password from mail_users where address = ${address} and active = 1`;
  if (h.engine === 'postgres') {
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${q}`.execute(h.store.db);
    return rows[0]['QUERY PLAN'].replace(/\s+\(cost=.*$/, '');
  }
  const { rows } = await sql<{ detail: string }>`explain query plan ${q}`.execute(h.store.db);
  return rows.map((r) => r.detail).join('; ');
}

/** The passdb query at one size of the directory. */
interface Lookup {
  phase: string;
  mailboxes: number;
  us: number[];
  plan: string;
}

interface DirectoryResult {
  runs: LoadRun[];
  lookups: Lookup[];
  /** Seconds to INSERT the bulk rows (and to DELETE them again). */
  insertS: number;
  deleteS: number;
  bulkRows: number;
  warmS: number;
}

async function directoryRuns(h: Instance, log: (s: string) => void): Promise<DirectoryResult> {
  const password = crypto.randomBytes(15).toString('base64url');
  const hash = await blfCrypt(password);
  const small = Array.from({ length: SMALL }, (_, i) => smallAddress(i));
  const bulkRows = Math.max(0, DIRECTORY - SMALL);
  // Spread over the whole bulk: every (bulkRows / SAMPLE)-th row.
  const bulkSample = Array.from({ length: Math.min(SAMPLE, bulkRows) }, (_, k) => bulkAddress(Math.floor(((k + 0.5) * bulkRows) / Math.min(SAMPLE, bulkRows))));
  const smallSample = small.slice(0, Math.min(SAMPLE, SMALL));
  const maxClients = Math.max(...CLIENTS);
  const runs: LoadRun[] = [];
  const lookups: Lookup[] = [];
  const measure = async (phase: string, addresses: string[], scheme: string, clientsList: number[]) => {
    const mailboxes = await mailboxCount(h.store);
    if (phase !== 'cheap') {
      await lookupTimes(h, addresses, LOOKUPS / 10);
      lookups.push({ phase, mailboxes, us: await lookupTimes(h, addresses, LOOKUPS), plan: await lookupPlan(h, addresses[0]) });
    }
    for (const clients of clientsList) {
      const r = await loginLoad(h, addresses, password, clients, SECONDS);
      runs.push({ mailboxes, scheme, phase, ...r });
      log(`  ${h.engine} ${phase}: ${mailboxes} mailboxes, ${scheme}, ${clients} clients: ${fmt(r.ok / r.seconds, 1)} logins/s${r.failed ? `, ${r.failed} failed (${r.firstError})` : ''}`);
    }
  };

  await insertRows(h.store, smallAddress, 0, SMALL, hash);
  await analyze(h);
  let t = performance.now();
  await loginEach(h.imap, smallSample, password, maxClients);
  let warmS = (performance.now() - t) / 1000;
  await measure('A1', smallSample, 'BLF-CRYPT', CLIENTS);

  t = performance.now();
  await insertRows(h.store, bulkAddress, 0, bulkRows, hash);
  await analyze(h);
  const insertS = (performance.now() - t) / 1000;
  log(`  ${h.engine}: ${bulkRows} rows inserted in ${fmt(insertS, 1)} s`);
  t = performance.now();
  await loginEach(h.imap, bulkSample, password, maxClients);
  warmS += (performance.now() - t) / 1000;
  await measure('B', bulkSample, 'BLF-CRYPT', CLIENTS);

  t = performance.now();
  await h.store.db.deleteFrom('mail_users').where('domain', 'like', '%.bench-bulk.example').execute();
  await h.store.db.deleteFrom('mail_domains').where('domain', 'like', '%.bench-bulk.example').execute();
  await analyze(h);
  const deleteS = (performance.now() - t) / 1000;
  await measure('A2', smallSample, 'BLF-CRYPT', CLIENTS);

  if (CHEAP) {
    // The same addresses with a cheaper hash: what is left is IMAP, the processes, the SQL lookup.
    const cheap: [string, string | null][] = [['SHA512-CRYPT', sha512Crypt(password)], ['PLAIN', `{PLAIN}${password}`]];
    for (const [scheme, cheapHash] of cheap) {
      if (!cheapHash) {
        log(`  (${scheme} skipped: openssl passwd -6 did not work)`);
        continue;
      }
      await h.store.db.updateTable('mail_users').set({ password_hash: cheapHash }).where('domain', 'like', '%.bench-dir.example').execute();
      await measure('cheap', smallSample, scheme, [maxClients]);
    }
    await h.store.db.updateTable('mail_users').set({ password_hash: hash }).where('domain', 'like', '%.bench-dir.example').execute();
  }
  return { runs, lookups, insertS, deleteS, bulkRows, warmS };
}

// ---- an engine ---------------------------------------------------------------------------------

interface EngineResult {
  engine: EngineName;
  product: ProductRun[];
  row: RowRun[];
  existing: number[];
  directory: DirectoryResult;
  /** Mailboxes in the directory at the first timed create. */
  createMailboxes: number;
  createS: number;
  loadBefore: number[];
  loadMiddle: number[];
  loadAfter: number[];
  submission: SubmitResult | null;
}

async function engineRun(engine: EngineName, root: string, log: (s: string) => void): Promise<EngineResult> {
  const h = await startInstance(engine, root);
  try {
    const w = workerSettings(h.config);
    log(`${engine}: app on ${h.base}, IMAP ${h.imap}; worker concurrency ${w.concurrency}, poll ${w.pollMs} ms`);
    const loadBefore = os.loadavg();
    const directory = await directoryRuns(h, log);
    const loadMiddle = os.loadavg();

    // The existing mailbox: a row of its own, logged in to once before the timed logins.
    const existingUser = `existing@${DOMAIN}`;
    const existingPassword = crypto.randomBytes(15).toString('base64url');
    await new MailDirectoryRepository(h.store.db).addDomain(DOMAIN, STACK_SERVER);
    await new MailDirectoryRepository(h.store.db).addUser({ address: existingUser, domain: DOMAIN, passwordHash: await blfCrypt(existingPassword), quotaBytes: QUOTA_BYTES, recipientsPerHour: 500, server: STACK_SERVER });
    await firstLogin(h.imap, existingUser, existingPassword);
    for (let i = 0; i < WARMUP; i++) {
      await existingRun(h, existingUser, existingPassword);
      await rowRun(h);
      await productRun(h);
    }
    const createMailboxes = await mailboxCount(h.store);
    const out = { product: [] as ProductRun[], row: [] as RowRun[], existing: [] as number[] };
    const started = performance.now();
    for (let i = 0; i < CREATES; i++) {
      out.existing.push(await existingRun(h, existingUser, existingPassword));
      out.row.push(await rowRun(h));
      out.product.push(await productRun(h));
    }
    const createS = (performance.now() - started) / 1000;
    const loadAfter = os.loadavg();
    const submission = await submissionBench({
      engine, stackDir: path.join(root, engine), api: h.base, token: h.token, domain: DOMAIN, log, check: checkInterrupted, interrupted: () => stacks.interrupted,
    });
    return { engine, ...out, directory, createMailboxes, createS, loadBefore, loadMiddle, loadAfter, submission };
  } finally {
    await h.close();
  }
}

// ---- output ------------------------------------------------------------------------------------

function createRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const existing = pct(r.existing, 50);
    const row = pct(r.row.map((x) => x.login), 50);
    const line = (what: string, xs: number[], attempts: string) => [
      r.engine, what, String(xs.length), fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1), fmt(Math.max(...xs), 1), fmt(mean(xs), 1),
      fmt(pct(xs, 50) / existing, 2), fmt(pct(xs, 50) / row, 2), attempts,
    ];
    return [
      line('existing: LOGIN of a mailbox logged in to before', r.existing, '1'),
      line('row: bcrypt hash + INSERT → first LOGIN', r.row.map((x) => x.login), fmt(pct(r.row.map((x) => x.attempts), 50))),
      line('POST /email-addresses → first LOGIN', r.product.map((x) => x.login), fmt(pct(r.product.map((x) => x.attempts), 50))),
    ];
  });
}

function stepRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const steps: [string, number[]][] = [
      ['202 received (directory row committed)', r.product.map((p) => p.post)],
      ['first LOGIN OK', r.product.map((p) => p.login)],
      ['  of which the LOGIN after the 202', r.product.map((p) => p.login - p.post)],
      ['job: doveadm lookup found the mailbox', r.product.map((p) => p.found)],
      ['job done (finished_at, 1 ms resolution)', r.product.map((p) => p.done)],
      ['row: bcrypt hash made (bcryptjs, cost 10)', r.row.map((x) => x.hash)],
      ['row: INSERT committed', r.row.map((x) => x.row)],
      ['row: first LOGIN OK', r.row.map((x) => x.login)],
    ];
    return steps.map(([s, xs]) => [r.engine, s, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)]);
  });
}

function loadRows(results: EngineResult[]): string[][] {
  return results.flatMap((r) => {
    const runs = r.directory.runs;
    const perS = (x: LoadRun) => x.ok / x.seconds;
    // The baseline of a run: the mean logins/s of the small-directory BLF-CRYPT runs (A1, A2) with as many clients.
    const cpuPerLogin = (x: LoadRun) => (x.dovecotCpu / x.ok) * 1000;
    const baseline = (clients: number, f: (x: LoadRun) => number) => mean(runs.filter((x) => x.clients === clients && (x.phase === 'A1' || x.phase === 'A2')).map(f));
    return runs.map((x) => [
      r.engine, x.phase, String(x.mailboxes), x.scheme, String(x.clients), fmt(x.seconds, 1), String(x.ok), fmt(perS(x), 1), fmt(perS(x) / baseline(x.clients, perS), 2),
      fmt(pct(x.latency, 50), 1), fmt(pct(x.latency, 99), 1), String(x.failed), fmt(cpuPerLogin(x), 1), fmt(cpuPerLogin(x) / baseline(x.clients, cpuPerLogin), 2),
      `${fmt((x.authCpu / x.seconds) * 100)}%`, fmt((x.dbCpu / x.ok) * 1000, 2), `${fmt(x.elu * 100)}%`,
    ]);
  });
}

async function main() {
  const started = Date.now();
  console.log(`${benchHeader('e-mail')}, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`);
  if (process.getuid?.() !== 0) throw new Error('the bench runs the local stack\'s Dovecot and Postfix (deploy/local/up.sh), which need root');
  const dovecot = spawnSync('dovecot', ['--version'], { encoding: 'utf8' });
  if (dovecot.status !== 0) throw new Error('dovecot is not installed (Debian: dovecot-imapd dovecot-lmtpd dovecot-pgsql dovecot-sqlite; and postfix postfix-pgsql postfix-sqlite)');
  console.log(
    `Dovecot ${dovecot.stdout.trim().split(' ')[0]}; 1: ${CREATES} creates of each after ${WARMUP} untimed, LOGIN tried every ${POLL_MS} ms; ` +
      `2: ${SMALL} / ${DIRECTORY} mailboxes, ${CLIENTS.join(' and ')} clients × ${SECONDS} s over ${SAMPLE} addresses`,
  );
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.log(s);
  // The users mail, dovecot and postfix must be able to enter the stacks' dir (as in production).
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-bench-mail-')));
  fs.chmodSync(root, 0o755);
  const results: EngineResult[] = [];
  await stacks.guard(root, log, async () => {
    for (const engine of (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as EngineName[]) results.push(await engineRun(engine, root, log));
  });

  console.log();
  console.log(`1. Time to the first successful IMAP LOGIN of a new mailbox (ms), ${CREATES} sequential creates each, the three alternating`);
  console.log(
    markdownTable(['engine', 'what', 'n', 'p50', 'p99', 'max', 'mean', '× existing p50', '× row p50', 'LOGIN attempts p50'], createRows(results), 2),
  );
  console.log(`   p99 of ${CREATES} samples is the ${Math.ceil(0.99 * CREATES)}th smallest (nearest rank); directory: ${results.map((r) => `${r.engine} ${r.createMailboxes}`).join(', ')} mailboxes at the first timed create`);
  console.log();
  console.log('2. Where a create\'s time goes (ms from sending the POST; row: from hashing)');
  console.log(markdownTable(['engine', 'step', 'p50', 'p99'], stepRows(results), 2));
  console.log();
  console.log(`3. IMAP logins per second (connect, LOGIN, LOGOUT in a loop per client, ${SECONDS} s each) over ${SAMPLE} addresses, each logged in to once before`);
  console.log(
    markdownTable(
      ['engine', 'run', 'mailboxes', 'scheme', 'clients', 's', 'logins', 'logins/s', '× small dir', 'LOGIN p50 ms', 'LOGIN p99 ms', 'failed', 'Dovecot CPU ms / login', '× small dir', 'auth process busy', 'PostgreSQL CPU ms / login', 'this process busy'],
      loadRows(results),
      4,
    ),
  );
  console.log(`   A1, B, A2 in this order: ${SMALL} mailboxes, ${DIRECTORY} (the bulk rows INSERTed between), ${SMALL} again (bulk rows DELETEd); × small dir: the column before over its mean in A1 and A2 with as many clients;`);
  console.log('   every bulk row has the same {BLF-CRYPT} hash (cost 10): hashing each would take over an hour, and Dovecot verifies each login alike;');
  console.log('   B logs in to addresses spread over the whole bulk; cheap: the small directory\'s rows with another scheme (bcrypt\'s share of a login);');
  console.log('   LOGIN ms: connect → tagged OK; Dovecot CPU: all its processes (imap-login, imap, auth, auth workers, …) from /proc, per successful login;');
  console.log('   auth process busy: CPU of Dovecot\'s single auth process over the run\'s time (100% = one core: the passdb, and with it bcrypt, runs there unless its SQL driver blocks);');
  console.log('   PostgreSQL CPU: the server processes of the mail servers\' connections (the role up.sh made), per login; this process busy: event-loop');
  console.log('   utilisation of this process (the clients and the app Dovecot reports logins to)');
  console.log();
  console.log(`4. The passdb query alone (password_query of src/node/render, by primary key), ${LOOKUPS} times one after the other from this process over the same addresses, µs with the round trip`);
  console.log(
    markdownTable(
      ['engine', 'run', 'mailboxes', 'p50 µs', 'p99 µs', '× small dir p50', 'plan'],
      results.flatMap((r) => {
        const ls = r.directory.lookups;
        const base = mean(ls.filter((l) => l.phase !== 'B').map((l) => pct(l.us, 50)));
        return ls.map((l) => [r.engine, l.phase, String(l.mailboxes), fmt(pct(l.us, 50)), fmt(pct(l.us, 99)), fmt(pct(l.us, 50) / base, 2), l.plan]);
      }),
      3,
    ),
  );
  console.log();
  for (const r of results) {
    const d = r.directory;
    console.log(
      `   ${r.engine}: ${d.bulkRows} bulk rows INSERTed in ${fmt(d.insertS, 1)} s (batches of ${BATCH}), DELETEd in ${fmt(d.deleteS, 1)} s; first logins of the sampled addresses ${fmt(d.warmS, 1)} s; ` +
        `${CREATES} × 3 creates in ${fmt(r.createS, 1)} s; load average ${loadAverage(r.loadBefore)} → ${loadAverage(r.loadMiddle)} (after part 2) → ${loadAverage(r.loadAfter)}`,
    );
  }
  const submission = submissionReport(results);
  if (submission) console.log(`\n${submission}`);
  if (process.env.BENCH_JSON) console.log(JSON.stringify(results, null, 1));
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}

runBench(main, () => stacks.interrupted);
