// What the web server bench times: one change at a time (POST → Caddy answers), a burst of
// changes, and where a push's time goes.
import { performance } from 'node:perf_hooks';
import { sleep, jobFinishedAt } from '../report.js';
import { tlsAskUrl } from '../../src/provisioning/drivers.js';
import { CaddyClient, sameJson } from '../../src/provisioning/web/caddy-client.js';
import { caddyConfig } from '../../src/provisioning/web/caddy-config.js';
import { probeSite } from '../../src/provisioning/web/probe.js';
import type { SiteSpec } from '../../src/provisioning/web/sites.js';
import { SubdomainsRepository } from '../../src/resources/subdomains/subdomains.repository.js';
import { reconcileWebServer } from '../../src/resources/subdomains/subdomains.jobs.js';
import { POLL_MS, COMPONENT_N, JOB_POLL_MS, ANSWER_LIMIT_MS, WEB, wallNow, checkInterrupted } from './settings.js';
import { readCaddyLog, type Instance } from './instance.js';
import { hostOf, answers, headers, postRedirect } from './client.js';

/** One change, ms from sending the POST. */
export interface ChangeRun {
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

export async function oneChange(h: Instance, label: string): Promise<ChangeRun> {
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

export interface BurstRun {
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
export async function burst(h: Instance, prefix: string, count: number): Promise<BurstRun> {
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

export interface Components {
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
export async function components(h: Instance): Promise<Components> {
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
