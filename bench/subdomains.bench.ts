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
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt, markdownTable, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL, jobFinishedAt } from './report.js';
import { printServing, servingMissing, servingRun, servingSite, type ServingResult } from './web-serving.js';
import { workerSettings } from '../src/queue/worker.js';
import { reconcileWebServer } from '../src/resources/subdomains/subdomains.jobs.js';
import { SITES, CHANGES, WARMUP, BURST, POLL_MS, COMPONENT_N, PARTS, JOB_POLL_MS, ANSWER_LIMIT_MS, DOMAIN, TARGET_P50_MS, TARGET_AT_SITES, type EngineName, stacks, checkInterrupted } from './web/settings.js';
import { startInstance } from './web/instance.js';
import { answers, headers, siteCount, bringUpExisting } from './web/client.js';
import { type ChangeRun, oneChange, type BurstRun, burst, type Components, components } from './web/changes.js';

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
