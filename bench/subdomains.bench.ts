// Subdomains benchmark (docs/performance.md "Subdomains"), on SQLite and, when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL, against the local stack
// (deploy/local/up.sh: a private Caddy on loopback ports, started and stopped by this bench):
//
//   A/B. change → answer: at each size of BENCH_WEB_SITES (10 and 1,000 existing sites), POST
//        /subdomains (a static redirect) over HTTP, then ask the web server for the host (plain
//        HTTP with that Host, no redirect followed) every BENCH_WEB_POLL_MS until it answers 301
//        with exactly the target; also the time until the job is `done` (its finished_at).
//        BENCH_WEB_CHANGES changes, one at a time. Target: p50 < 500 ms at 1,000 sites.
//   C.   a burst: BENCH_WEB_BURST POSTs sent at once → the time until every host answers, and how
//        many configs Caddy loaded meanwhile (counted in Caddy's own log: its admin API logs each
//        POST /load and its "load complete"), to show that a burst is pushed in few loads.
//   and where the time of a push goes at each size: the store read, the config build, Caddy's
//   GET /config/ and the compare, a load (from Caddy's log), a probe.
//
// Each size gets its own instance: a fresh store, a fresh stack registered in it as web server
// `local`, an app listening on a free port (PUBLIC_BASE_URL = its URL, WEB_SERVER=local,
// WEB_TLS_ISSUER=internal) with, as `serve` builds them, a DNS server (jobs wait for DNS), the
// worker with the web server's queue and the web reconciler. One customer, one package on a plan
// with max_subdomains 2000, one presence domain; the existing sites are redirects created through
// the API before the worker starts, then brought up by it (the bench checks that Caddy's config
// has every route and that the first and last site answer). The stacks are stopped with down.sh
// --purge at the end, also after an error or Ctrl-C.
//
//   npm run bench:subdomains
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:subdomains
//
// Settings (environment): BENCH_WEB_SITES [10,1000] (existing sites at the first timed change),
// BENCH_WEB_CHANGES [50], BENCH_WEB_WARMUP [3] (untimed changes first; they count as existing
// sites), BENCH_WEB_BURST [50] (0 skips the burst), BENCH_WEB_POLL_MS [3], BENCH_WEB_BULK_PARALLEL
// [8] (POSTs in flight while the existing sites are created), BENCH_WEB_COMPONENT_N [20],
// BENCH_LOG_LEVEL [info], BENCH_JSON=1 prints the samples as JSON as well. The worker runs with the
// product's JOB_* defaults, the reconciler every 5 s as under `serve`. Needs caddy, curl, jq and
// setsid (as deploy/local/up.sh does); stacks and the SQLite store go under TMPDIR.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { benchConfig, freshBenchStore, processUrlOf } from './store.js';
import { discard, fmt, markdownTable, sleep, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL, ACCEPT, JSONAPI, jobFinishedAt } from './report.js';
import { freePort } from '../test/helpers/ports.js';
import { BenchStacks } from './stacks.js';
import { printServing, servingMissing, servingRun, servingSite, type ServingResult } from './web-serving.js';
import { buildApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import type { Store } from '../src/db/index.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers, closeDrivers, tlsAskUrl, type Drivers } from '../src/provisioning/drivers.js';
import { DnsServer } from '../src/dns/server.js';
import type { WebDriver } from '../src/provisioning/web/driver.js';
import { CaddyClient, sameJson } from '../src/provisioning/web/caddy-client.js';
import { caddyConfig } from '../src/provisioning/web/caddy-config.js';
import { probeSite } from '../src/provisioning/web/probe.js';
import type { SiteSpec, WebServerConn } from '../src/provisioning/web/sites.js';
import { WebServersRepository, webServerConn } from '../src/provisioning/web/servers.repository.js';
import { SubdomainsRepository } from '../src/resources/subdomains/subdomains.repository.js';
import { reconcileWebServer } from '../src/resources/subdomains/subdomains.jobs.js';
import { startWebReconciler } from '../src/resources/subdomains/subdomains.reconcile.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SITES = (process.env.BENCH_WEB_SITES ?? '10,1000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const CHANGES = num('BENCH_WEB_CHANGES', 50);
const WARMUP = num('BENCH_WEB_WARMUP', 3);
const BURST = num('BENCH_WEB_BURST', 50);
const POLL_MS = num('BENCH_WEB_POLL_MS', 3);
const BULK_PARALLEL = num('BENCH_WEB_BULK_PARALLEL', 8);
const COMPONENT_N = num('BENCH_WEB_COMPONENT_N', 20);
/** Which parts run: `changes` (A/B, C and the push's parts), `serving` (req/s and p99 against nginx). */
const PARTS = (process.env.BENCH_WEB_PARTS ?? 'changes,serving').split(',').map((p) => p.trim());
/** How often the client polls a job once its host answers (its `done` time is read from finished_at). */
const JOB_POLL_MS = 20;
const ANSWER_LIMIT_MS = 60_000;
/** Bringing the existing sites up fails when no further site goes live for this long. */
const BULK_STALL_MS = 120_000;
/** The name up.sh registers the stack's web server under. */
const WEB = 'local';
const DOMAIN = 'bench-sites.example';
/** Target of the subdomains bench, at 1,000 sites (docs/performance.md). */
const TARGET_P50_MS = 500;
const TARGET_AT_SITES = 1000;


type EngineName = 'sqlite' | 'postgres';

/** Wall-clock ms with sub-ms resolution (Caddy's log stamps and finished_at are wall clock). */
const wallNow = () => performance.timeOrigin + performance.now();

/** The stacks of this run, and Ctrl-C (bench/stacks.ts). */
const stacks = new BenchStacks();
const checkInterrupted = () => stacks.check();

// ---- the local stack ---------------------------------------------------------------------------


// ---- Caddy's log -------------------------------------------------------------------------------

interface CaddyLoad {
  /** Wall-clock ms: the admin API received POST /load … logged "load complete". */
  start: number;
  end: number;
}

/** The loads and GET /config/ requests Caddy logged (its admin API logs every request at info). */
function readCaddyLog(file: string): { loads: CaddyLoad[]; configGets: number[] } {
  const loads: CaddyLoad[] = [];
  const configGets: number[] = [];
  let open: number | null = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { logger?: string; msg?: string; ts?: number; method?: string; uri?: string };
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e.logger !== 'admin.api' || typeof e.ts !== 'number') continue;
    const ts = e.ts * 1000;
    if (e.msg === 'received request' && e.method === 'POST' && e.uri === '/load') open = ts;
    else if (e.msg === 'received request' && e.method === 'GET' && e.uri === '/config/') configGets.push(ts);
    else if (e.msg === 'load complete' && open !== null) {
      loads.push({ start: open, end: ts });
      open = null;
    }
  }
  return { loads, configGets };
}

// ---- the instance ------------------------------------------------------------------------------

/** A call of the web or DNS driver, as the bench's wrappers noted it (performance.now()). */
interface Mark {
  who: 'job' | 'reconciler';
  what: 'apply' | 'probe' | 'dns';
  start: number;
  end: number;
  /** apply: whether it loaded a config (every caller of a coalesced batch gets the batch's answer). */
  loaded?: boolean;
  host?: string;
  /** probe: the status answered; dns: 1 when the change was applied. */
  status?: number;
  sites?: number;
}

/**
 * The web driver as the worker (or the reconciler) uses it, with the times of its `apply` and
 * `probe` calls noted; both wrappers share one driver, so one Caddy client coalesces their pushes.
 */
function timedWeb(inner: WebDriver, who: Mark['who'], marks: Mark[]): WebDriver {
  return {
    ...inner,
    async apply(server, sites) {
      const start = performance.now();
      const loaded = await inner.apply(server, sites);
      marks.push({ who, what: 'apply', start, end: performance.now(), loaded, sites: sites.length });
      return loaded;
    },
    async probe(server, host, urlPath, https) {
      const start = performance.now();
      const a = await inner.probe(server, host, urlPath, https);
      marks.push({ who, what: 'probe', start, end: performance.now(), host, status: a.status });
      return a;
    },
  };
}

interface Instance {
  engine: EngineName;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  web: WebServerConn;
  stackDir: string;
  caddyLog: string;
  token: string;
  /** The product's web driver, unwrapped (the component timings use it). */
  innerWeb: WebDriver;
  marks: Mark[];
  /** Starts the worker and the reconciler (the existing sites are created before). */
  startBackground(): Promise<void>;
  close(): Promise<void>;
}

/**
 * As `serve` builds it with WEB_SERVER=local (src/cli/serve.ts), on a free port: the app, a DNS
 * server on 127.0.0.1:0, then (startBackground) the worker with the general and the web server's
 * queue and the reconciler. The stack is up and registered, the customer's package and domain made.
 */
async function startInstance(engine: EngineName, root: string, label: string): Promise<Instance> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const stackDir = path.join(root, `${engine}-${label}`);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let dns: DnsServer | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  let stopReconciler: (() => Promise<void>) | null = null;
  // Whatever was started, in reverse; the worker first, so no job pushes a config after the stack went.
  const close = async () => {
    await stopReconciler?.();
    await worker?.stop();
    await dns?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    if (stacks.has(stackDir)) await stacks.down(stackDir);
    await drop();
  };
  try {
    // The CLI up.sh runs reaches this store: the schema of a PostgreSQL store goes into its URL.
    const processUrl = (await processUrlOf(store, databaseUrl)).url;
    await stacks.up(stackDir, { DATABASE_URL: processUrl });
    const row = await new WebServersRepository(store.db).byName(WEB);
    if (!row) throw new Error(`up.sh did not register web server ${WEB}`);
    const web = webServerConn(row);

      for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const config = benchConfig(databaseUrl, base, { WEB_SERVER: WEB, WEB_TLS_ISSUER: 'internal' });
      limiter = new MemoryLimiter(config);
      app = await buildApp(config, { store, limiter, logStream: discard() });
      try {
        await app.listen({ host: '127.0.0.1', port });
      } catch (err) {
        await app.close();
        await limiter.close();
        app = limiter = null;
        if (attempt < 5 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
        throw err;
      }

      const admin = buildAdmin(serviceDeps(store, config));
      const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench AG', contact: { name: 'bench', email: 'admin@bench.example', phone: '+49 30 1234567' } });
      const { planId } = await admin.packages.createPlan({ name: 'bench plan', maxSubdomains: 2000, phpVersions: Object.keys(web.php).sort().slice(0, 1) });
      const { packageId } = await admin.packages.createPackage({ customerId, planId, name: 'bench', linuxUser: 'web_bench' });
      await admin.domains.createDomain({ name: DOMAIN, customerId, packageId, registered: true });
      const { token } = await admin.customers.issueToken(contactId, 'bench');

      // Started before the worker, as under `serve`: subdomain jobs wait for a live DNS server.
      dns = await DnsServer.start({ store, config, log: app.log, listen: '127.0.0.1:0' });
      const built = buildDrivers({ config, store });
      const marks: Mark[] = [];
      drivers = {
        ...built,
        web: timedWeb(built.web, 'job', marks),
        dns: {
          ...built.dns,
          async isApplied(changeId) {
            const start = performance.now();
            const ok = await built.dns.isApplied(changeId);
            marks.push({ who: 'job', what: 'dns', start, end: performance.now(), status: ok ? 1 : 0 });
            return ok;
          },
        },
      };
      const jobDrivers = drivers;
      const theApp = app;
      return {
        engine, store, config, app, base, web, stackDir, token, marks,
        caddyLog: path.join(stackDir, 'caddy', 'caddy.log'),
        innerWeb: built.web,
        async startBackground() {
          worker = new Worker({ store, jobs: buildJobs(), drivers: jobDrivers, log: theApp.log, ...workerSettings(config) });
          await worker.start();
          stopReconciler = startWebReconciler({ store, web: timedWeb(built.web, 'reconciler', marks), name: WEB, log: theApp.log });
        },
        close,
      };
    }
  } catch (err) {
    await close().catch((e) => console.error(`cleanup after a failed start: ${(e as Error).message}`));
    throw err;
  }
}

// ---- the client ----------------------------------------------------------------------------------

/** What the web server answers for `host` at `/` on plain HTTP, not following redirects; a new connection each time. */
function ask(web: WebServerConn, host: string): Promise<{ status: number; location: string | null }> {
  const port = Number(web.httpListen.slice(web.httpListen.lastIndexOf(':') + 1));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', method: 'GET', headers: { host }, timeout: 10_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: (res.headers.location as string | undefined) ?? null }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${web.httpListen} for ${host}`)));
    req.on('error', reject);
    req.end();
  });
}

const targetOf = (label: string) => `https://target.example/${label}`;
const hostOf = (label: string) => `${label}.${DOMAIN}`;

/** Whether the web server answers `label`'s host with exactly its redirect; errors (a connection refused mid-reload) count as "not yet". */
async function answers(h: Instance, label: string): Promise<boolean> {
  try {
    const a = await ask(h.web, hostOf(label));
    return a.status === 301 && a.location === targetOf(label);
  } catch {
    return false;
  }
}

const headers = (h: Instance, body = false): Record<string, string> => ({
  authorization: `token ${h.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

/** POST /subdomains (a static redirect to targetOf(label)): the job's URL. */
async function postRedirect(h: Instance, label: string): Promise<string> {
  const res = await fetch(`${h.base}/subdomains`, {
    method: 'POST',
    headers: headers(h, true),
    body: JSON.stringify({ data: { type: 'subdomain', attributes: { subdomain_type: 'redirect', domain: DOMAIN, subdomain: label, redirect: { target: targetOf(label) } } } }),
  });
  const text = await res.text();
  const job = res.headers.get('content-location');
  if (res.status !== 202 || !job) throw new Error(`POST /subdomains ${label} on ${h.engine}: ${res.status} ${text.slice(0, 300)}`);
  return job;
}

const siteCount = async (h: Instance, state?: 'live') => {
  let q = h.store.db.selectFrom('subdomains').select((eb) => eb.fn.countAll<number>().as('n'));
  if (state) q = q.where('state', '=', state);
  return Number((await q.executeTakeFirstOrThrow()).n);
};

/** Routes of the plain-HTTP server in Caddy's running config, without the catch-all. */
async function caddyRoutes(h: Instance): Promise<number> {
  const cfg = (await new CaddyClient(h.web.caddyAdmin).current()) as { apps?: { http?: { servers?: { hp?: { routes?: unknown[] } } } } } | null;
  return (cfg?.apps?.http?.servers?.hp?.routes?.length ?? 1) - 1;
}

/**
 * The existing sites: `count` redirects POSTed over HTTP (BULK_PARALLEL in flight) while the
 * worker is not running yet, then the worker and the reconciler start and bring them up. Checked:
 * every one is live, Caddy's config has a route for each, the first and the last one answer.
 */
async function bringUpExisting(h: Instance, count: number, log: (s: string) => void): Promise<{ postS: number; upS: number }> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: BULK_PARALLEL }, async () => {
      for (let i = next++; i < count; i = next++) {
        checkInterrupted();
        await postRedirect(h, `e${i}`);
      }
    }),
  );
  const posted = performance.now();
  await h.startBackground();
  let live = -1;
  let progressAt = performance.now();
  for (;;) {
    checkInterrupted();
    const now = await siteCount(h, 'live');
    if (now === count) break;
    if (now !== live) {
      live = now;
      progressAt = performance.now();
    } else if (performance.now() - progressAt > BULK_STALL_MS) {
      throw new Error(`bringing up ${count} sites stalled at ${now} live for ${BULK_STALL_MS / 1000} s`);
    }
    await sleep(200);
  }
  const up = performance.now();
  const routes = await caddyRoutes(h);
  if (routes !== count) throw new Error(`Caddy's config has ${routes} routes for ${count} live sites`);
  for (const label of count ? ['e0', `e${count - 1}`] : []) {
    if (!(await answers(h, label))) throw new Error(`existing site ${hostOf(label)} does not answer its redirect`);
  }
  log(`  ${h.engine}: ${count} existing sites POSTed in ${((posted - started) / 1000).toFixed(1)} s, live and in Caddy's config ${((up - posted) / 1000).toFixed(1)} s later`);
  return { postS: (posted - started) / 1000, upS: (up - posted) / 1000 };
}

// ---- A/B: one change at a time -------------------------------------------------------------------

/** One change, ms from sending the POST. */
interface ChangeRun {
  /** 202 received. */
  post: number;
  /** The job's first config push began (after wake-up, claim and the job's reads, every site's row included) and returned. */
  applyStart: number;
  applyEnd: number;
  /** The client got the 301 with the exact Location. */
  answer: number;
  /** The job's own probe of the host returned 301. */
  probed: number;
  /** The job found its DNS change answered. */
  dns: number;
  /** The job's finished_at (1 ms resolution, wall clock). */
  done: number;
  /** Config pushes of the job (a run that waits for DNS runs again from the top), and of the reconciler. */
  jobApplies: number;
  reconcilerApplies: number;
  /** Loads Caddy logged between the POST and the job's end, and how long they took there (received → complete). */
  loads: number;
  loadMs: number;
  polls: number;
}

async function oneChange(h: Instance, label: string): Promise<ChangeRun> {
  checkInterrupted();
  h.marks.length = 0;
  const wall0 = wallNow();
  const t0 = performance.now();
  const jobUrl = await postRedirect(h, label);
  const t202 = performance.now();
  let polls = 0;
  let t1 = NaN;
  for (const end = t0 + ANSWER_LIMIT_MS; ; ) {
    const started = performance.now();
    polls++;
    if (await answers(h, label)) {
      t1 = performance.now();
      break;
    }
    if (started > end) throw new Error(`${hostOf(label)} not answered within ${ANSWER_LIMIT_MS} ms`);
    checkInterrupted();
    await sleep(Math.max(0, started + POLL_MS - performance.now()));
  }
  const finishedAt = await jobFinishedAt(jobUrl, headers(h), { limitMs: ANSWER_LIMIT_MS, pollMs: JOB_POLL_MS, check: checkInterrupted });
  const host = hostOf(label);
  const jobApplies = h.marks.filter((m) => m.who === 'job' && m.what === 'apply');
  const probe = h.marks.find((m) => m.what === 'probe' && m.host === host && m.status === 301);
  const dns = h.marks.find((m) => m.what === 'dns' && m.status === 1);
  const loads = readCaddyLog(h.caddyLog).loads.filter((l) => l.start >= wall0 && l.start <= finishedAt + 1);
  return {
    post: t202 - t0,
    applyStart: (jobApplies[0]?.start ?? NaN) - t0,
    applyEnd: (jobApplies[0]?.end ?? NaN) - t0,
    answer: t1 - t0,
    probed: (probe?.end ?? NaN) - t0,
    dns: (dns?.end ?? NaN) - t0,
    done: finishedAt - wall0,
    jobApplies: jobApplies.length,
    reconcilerApplies: h.marks.filter((m) => m.who === 'reconciler' && m.what === 'apply').length,
    loads: loads.length,
    loadMs: loads.reduce((a, l) => a + l.end - l.start, 0),
    polls,
  };
}

// ---- C: a burst ----------------------------------------------------------------------------------

interface BurstRun {
  changes: number;
  /** ms from sending the first POST: every 202, each host's first exact answer, every job done. */
  posts: number;
  answers: number[];
  done: number;
  /** In that window: loads and GET /config/ Caddy logged, pushes of the jobs (and how many said "loaded"), of the reconciler. */
  loads: number;
  loadMs: number[];
  configGets: number;
  jobApplies: number;
  jobAppliesLoaded: number;
  reconcilerApplies: number;
  sweeps: number;
  /** Event-loop utilisation of this process (app, worker, DNS server and client) over the window. */
  elu: number;
}

/**
 * `count` POSTs sent at once; then every host still not answering is asked in turn (one request
 * at a time, a sweep at most every POLL_MS) until all answer with their redirect.
 */
async function burst(h: Instance, prefix: string, count: number): Promise<BurstRun> {
  checkInterrupted();
  h.marks.length = 0;
  const labels = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  const wall0 = wallNow();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const jobUrls = await Promise.all(labels.map((l) => postRedirect(h, l)));
  const tPosts = performance.now();
  const answered = new Map<string, number>();
  let sweeps = 0;
  while (answered.size < count) {
    const started = performance.now();
    sweeps++;
    for (const l of labels) {
      if (!answered.has(l) && (await answers(h, l))) answered.set(l, performance.now() - t0);
    }
    if (started - t0 > ANSWER_LIMIT_MS) throw new Error(`burst: ${count - answered.size} hosts not answered within ${ANSWER_LIMIT_MS} ms`);
    checkInterrupted();
    await sleep(Math.max(0, started + POLL_MS - performance.now()));
  }
  const finished = await Promise.all(jobUrls.map((u) => jobFinishedAt(u, headers(h), { limitMs: ANSWER_LIMIT_MS, pollMs: JOB_POLL_MS, check: checkInterrupted })));
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const lastDone = Math.max(...finished);
  const log = readCaddyLog(h.caddyLog);
  const inWindow = (ts: number) => ts >= wall0 && ts <= lastDone + 1;
  const loads = log.loads.filter((l) => inWindow(l.start));
  const jobApplies = h.marks.filter((m) => m.who === 'job' && m.what === 'apply');
  return {
    changes: count,
    posts: tPosts - t0,
    answers: labels.map((l) => answered.get(l)!),
    done: lastDone - wall0,
    loads: loads.length,
    loadMs: loads.map((l) => l.end - l.start),
    configGets: log.configGets.filter(inWindow).length,
    jobApplies: jobApplies.length,
    jobAppliesLoaded: jobApplies.filter((m) => m.loaded).length,
    reconcilerApplies: h.marks.filter((m) => m.who === 'reconciler' && m.what === 'apply').length,
    sweeps,
    elu,
  };
}

// ---- where a push's time goes ------------------------------------------------------------------

interface Components {
  sites: number;
  /** The config as the product builds it, serialized (bytes). */
  configBytes: number;
  /** ms per run, COMPONENT_N runs each. */
  read: number[];
  build: number[];
  get: number[];
  compare: number[];
  push: number[];
  probe: number[];
  /** Caddy's load times (received POST /load → load complete) of the whole run at this size. */
  loads: number[];
}

/**
 * With the instance idle: the store read of every site, the config build, Caddy's GET /config/,
 * the compare, a whole push that finds nothing to load (what every job run and reconcile pays),
 * a probe. The build is the product's caddyConfig over the sites as the job maps redirects; it is
 * checked to equal what Caddy runs.
 */
async function components(h: Instance): Promise<Components> {
  const repo = new SubdomainsRepository(h.store.db);
  const client = new CaddyClient(h.web.caddyAdmin);
  const opts = { askUrl: tlsAskUrl(h.config.publicBaseUrl), tls: h.config.webTlsIssuer };
  const out: Components = { sites: 0, configBytes: 0, read: [], build: [], get: [], compare: [], push: [], probe: [], loads: [] };
  const time = async <T>(into: number[], f: () => Promise<T> | T): Promise<T> => {
    const t = performance.now();
    const r = await f();
    into.push(performance.now() - t);
    return r;
  };
  for (let i = 0; i < COMPONENT_N; i++) {
    checkInterrupted();
    const rows = await time(out.read, () => repo.sitesOn(WEB));
    const body = await time(out.build, () => {
      const specs: SiteSpec[] = rows.map((r) => ({ id: String(r.id), host: `${r.name}.${r.domain}`, kind: 'redirect', target: r.redirect_target!, dynamic: false, https: false }));
      return JSON.stringify(caddyConfig(h.web, specs, opts));
    });
    const current = await time(out.get, () => client.current());
    const same = await time(out.compare, () => sameJson(current, JSON.parse(body)));
    if (!same) throw new Error('the config built here is not what Caddy runs: the component timings would be of another config');
    const loaded = await time(out.push, () => reconcileWebServer(h.store, h.innerWeb, WEB));
    if (loaded) throw new Error('a push with nothing changed loaded a config');
    await time(out.probe, () => probeSite(h.web, hostOf('e0')));
    out.sites = rows.length;
    out.configBytes = Buffer.byteLength(body);
  }
  out.loads = readCaddyLog(h.caddyLog).loads.map((l) => l.end - l.start);
  return out;
}

// ---- a size --------------------------------------------------------------------------------------

interface SizeResult {
  engine: EngineName;
  /** Sites live before the first timed change, and before the burst. */
  sites: number;
  burstSites: number;
  changes: ChangeRun[];
  burst: BurstRun | null;
  components: Components;
  bulkPostS: number;
  bulkUpS: number;
  seconds: number;
  loadBefore: number[];
  loadAfter: number[];
}

async function sizeRun(engine: EngineName, root: string, sites: number, log: (s: string) => void): Promise<SizeResult> {
  const h = await startInstance(engine, root, String(sites));
  try {
    const w = workerSettings(h.config);
    log(`${engine}, ${sites} sites: app on ${h.base}, Caddy admin ${h.web.caddyAdmin}, HTTP ${h.web.httpListen}; worker concurrency ${w.concurrency}, poll ${w.pollMs} ms`);
    const warm = Math.min(WARMUP, sites);
    const bulk = await bringUpExisting(h, sites - warm, log);
    for (let i = 0; i < warm; i++) await oneChange(h, `w${i}`);
    const live = await siteCount(h, 'live');
    const loadBefore = os.loadavg();
    const started = performance.now();
    const changes: ChangeRun[] = [];
    for (let i = 0; i < CHANGES; i++) changes.push(await oneChange(h, `c${i}`));
    const seconds = (performance.now() - started) / 1000;
    const burstSites = await siteCount(h, 'live');
    const b = BURST > 0 ? await burst(h, 'b', BURST) : null;
    const loadAfter = os.loadavg();
    const comp = await components(h);
    return { engine, sites: live, burstSites, changes, burst: b, components: comp, bulkPostS: bulk.postS, bulkUpS: bulk.upS, seconds, loadBefore, loadAfter };
  } finally {
    await h.close();
  }
}

// ---- output --------------------------------------------------------------------------------------


// ---- serving -------------------------------------------------------------------------------------

/** The serving part (bench/web-serving.ts) on an instance of its own: one webspace, nothing else. */
async function servingPart(root: string, log: (s: string) => void): Promise<ServingResult[]> {
  const h = await startInstance('sqlite', root, 'serving');
  try {
    await h.startBackground();
    const site = await servingSite({ ...h, caddyPidFile: path.join(h.stackDir, 'caddy', 'caddy.pid'), headers: headers(h, true), check: checkInterrupted }, DOMAIN, 'web_bench', (url) =>
      jobFinishedAt(url, headers(h), { limitMs: ANSWER_LIMIT_MS, pollMs: JOB_POLL_MS, check: checkInterrupted }),
    );
    return await servingRun(site, path.join(root, 'nginx'), log);
  } finally {
    await h.close();
  }
}

/** Tables 1–4 and the changes' target. */
function printChanges(results: SizeResult[]): void {
  console.log();
  console.log(`1. POST /subdomains (a static redirect) → the web server answers the host with the exact Location (asked every ${POLL_MS} ms), ms from sending the POST; ${CHANGES} changes one at a time`);
  console.log(
    markdownTable(
      ['engine', 'sites', 'n', 'POST p50', 'answer p50', 'answer p99', 'answer max', 'answer mean', 'done p50', 'done p99', 'Caddy loads / change', 'job pushes / change'],
      results.map((r) => {
        const a = r.changes.map((c) => c.answer);
        const d = r.changes.map((c) => c.done);
        return [
          r.engine, String(r.sites), String(a.length), fmt(pct(r.changes.map((c) => c.post), 50), 1), fmt(pct(a, 50), 1), fmt(pct(a, 99), 1), fmt(Math.max(...a), 1), fmt(mean(a), 1),
          fmt(pct(d, 50)), fmt(pct(d, 99)), fmt(mean(r.changes.map((c) => c.loads)), 2), fmt(mean(r.changes.map((c) => c.jobApplies)), 2),
        ];
      }),
      2,
    ),
  );
  console.log(`   sites = live before the first timed change; p99 of ${CHANGES} samples is the ${Math.ceil(0.99 * CHANGES)}th smallest (nearest rank)`);
  console.log();
  console.log('2. Where a change\'s time goes (ms from sending the POST)');
  const steps: [string, (c: ChangeRun) => number][] = [
    ['202 received', (c) => c.post],
    ['job: config push begins (wake-up, claim, reads incl. every site)', (c) => c.applyStart],
    ['job: config push returns (build, GET /config/, compare, load)', (c) => c.applyEnd],
    ['  of which Caddy loading (its log: POST /load received → load complete)', (c) => c.loadMs],
    ['client: host answers the redirect', (c) => c.answer],
    ['job: its probe answered 301', (c) => c.probed],
    ['job: DNS change answered', (c) => c.dns],
    ['job done (finished_at, 1 ms resolution)', (c) => c.done],
  ];
  console.log(
    markdownTable(
      ['engine', 'sites', 'step', 'p50', 'p99'],
      results.flatMap((r) => steps.map(([s, f]) => {
        const xs = r.changes.map(f);
        return [r.engine, String(r.sites), s, fmt(pct(xs, 50), 1), fmt(pct(xs, 99), 1)];
      })),
      3,
    ),
  );
  console.log();
  console.log('3. Where a push\'s time goes, with nothing else running (ms; Caddy load: received POST /load → "load complete" in Caddy\'s log, every load at that size)');
  console.log(
    markdownTable(
      ['engine', 'sites', 'sites in config', 'config KB', 'store read p50', 'build p50', 'GET /config/ p50', 'compare p50', 'push, nothing to load p50', 'Caddy load p50', 'Caddy load p99', 'probe p50'],
      results.map((r) => {
        const c = r.components;
        return [
          r.engine, String(r.sites), String(c.sites), fmt(c.configBytes / 1024), fmt(pct(c.read, 50), 1), fmt(pct(c.build, 50), 1), fmt(pct(c.get, 50), 1), fmt(pct(c.compare, 50), 1),
          fmt(pct(c.push, 50), 1), fmt(pct(c.loads, 50), 1), fmt(pct(c.loads, 99), 1), fmt(pct(c.probe, 50), 2),
        ];
      }),
      2,
    ),
  );
  console.log(`   ${COMPONENT_N} runs each; the push is reconcileWebServer (site read, build, GET /config/, compare) finding Caddy up to date`);
  if (BURST > 0) {
    console.log();
    console.log(`4. ${BURST} POSTs sent at once → every host answers (the hosts not yet answering asked one after the other, a sweep at most every ${POLL_MS} ms)`);
    console.log(
      markdownTable(
        ['engine', 'sites', 'all 202 ms', 'first answer ms', 'answer p50 ms', 'all answer ms', 'all done ms', 'Caddy loads', 'load ms (each)', 'GET /config/', 'job pushes (said loaded)', 'reconciler pushes', 'process busy'],
        results.filter((r) => r.burst).map((r) => {
          const b = r.burst!;
          return [
            r.engine, String(r.burstSites), fmt(b.posts), fmt(Math.min(...b.answers)), fmt(pct(b.answers, 50)), fmt(Math.max(...b.answers)), fmt(b.done),
            String(b.loads), b.loadMs.map((x) => fmt(x)).join(', '), String(b.configGets), `${b.jobApplies} (${b.jobAppliesLoaded})`, String(b.reconcilerApplies), `${fmt(b.elu * 100)}%`,
          ];
        }),
        2,
      ),
    );
    console.log('   Caddy loads and GET /config/ are counted in Caddy\'s own log from the first POST to the last job\'s end; "said loaded": pushes whose batch loaded (all callers of one coalesced load say so);');
    console.log('   process busy: event-loop utilisation of this one process (API, worker, DNS server, the bench\'s client) over that window');
  }
  console.log();
  for (const r of results) {
    console.log(
      `   ${r.engine}, ${r.sites} sites: existing sites POSTed in ${fmt(r.bulkPostS, 1)} s and up ${fmt(r.bulkUpS, 1)} s later; ${CHANGES} changes in ${fmt(r.seconds, 1)} s, ` +
        `load average ${loadAverage(r.loadBefore)} → ${loadAverage(r.loadAfter)}`,
    );
  }
  console.log();
  const missed = results
    .filter((r) => r.sites >= TARGET_AT_SITES)
    .map((r) => ({ r, p50: pct(r.changes.map((c) => c.answer), 50) }))
    .filter(({ p50 }) => p50 >= TARGET_P50_MS)
    .map(({ r, p50 }) => `${r.engine} at ${r.sites} sites: p50 ${fmt(p50, 1)} ms (< ${TARGET_P50_MS} ms)`);
  if (!results.some((r) => r.sites >= TARGET_AT_SITES)) console.log(`(target not checked: no run at ${TARGET_AT_SITES} sites or more)`);
  else console.log(missed.length ? `target missed: ${missed.join('; ')}` : `target met: POST → answer p50 < ${TARGET_P50_MS} ms at ${TARGET_AT_SITES} sites`);
}

const NGINX_VERSION = ['bash', '-c', 'PATH=$PATH:/usr/sbin nginx -v'];

async function main() {
  const started = Date.now();
  console.log(
    `${benchHeader('subdomains')}, ` +
      `load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`,
  );
  const caddy = spawnSync('caddy', ['version'], { encoding: 'utf8' });
  if (caddy.status !== 0) throw new Error('caddy is not installed (Debian package caddy): the bench drives a private one through deploy/local/up.sh');
  console.log(`caddy ${caddy.stdout.trim().split(' ')[0]}; ${SITES.join(' and ')} existing sites; ${CHANGES} changes after ${WARMUP} untimed, host asked every ${POLL_MS} ms; burst of ${BURST}`);
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.log(s);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-bench-web-'));
  const results: SizeResult[] = [];
  let serving: ServingResult[] = [];
  const servingWhyNot = PARTS.includes('serving') ? servingMissing() : null;
  if (servingWhyNot) console.log(`(serving part skipped: ${servingWhyNot})`);
  await stacks.guard(root, log, async () => {
    if (PARTS.includes('changes')) {
      for (const engine of (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as EngineName[]) {
        for (const sites of SITES) results.push(await sizeRun(engine, root, sites, log));
      }
    }
    if (PARTS.includes('serving') && !servingWhyNot) serving = await servingPart(root, log);
  });

  if (results.length) printChanges(results);
  if (serving.length) {
    console.log();
    printServing(serving, spawnSync(NGINX_VERSION[0], NGINX_VERSION.slice(1), { encoding: 'utf8' }).stderr.trim().replace(/^nginx version: nginx\//, ''));
  }
  if (process.env.BENCH_JSON) console.log(JSON.stringify({ changes: results, serving }, null, 1));
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}

runBench(main, () => stacks.interrupted);
