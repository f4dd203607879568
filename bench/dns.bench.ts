// DNS benchmark (docs/performance.md "DNS"), on SQLite and, when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL:
//
//   1. change → answer: POST /dns-records (a TXT record) over HTTP, then query the DNS server over
//      UDP every BENCH_DNS_POLL_MS until the record is answered; also the time until the job is
//      `done` (its finished_at). Targets: p50 < 200 ms, p99 < 1 s.
//   2. DNS queries per second: the DNS server on this thread, a UDP load generator in a worker
//      thread keeping BENCH_DNS_WINDOW queries outstanding.
//   3. List latency: GET /dns-records?filter[domain]=<a 100-record zone> with 10k / 100k / 1M
//      records in the store (BENCH_DNS_SIZES). Target: < 10 ms and flat as the store grows;
//      prints the plan of the list query (EXPLAIN) at each size.
//
//   npm run bench:dns
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:dns
//
// Settings (environment): BENCH_DNS_CHANGES [200], BENCH_DNS_PARALLEL [8] (clients of the
// parallel change run; 0 skips it), BENCH_DNS_POLL_MS [2], BENCH_DNS_QPS_S [5], BENCH_DNS_WINDOW [64],
// BENCH_DNS_SIZES [10000,100000,1000000], BENCH_DNS_LIST_N [200], BENCH_DNS_LOAD_BUDGET_S [180]
// (a store size whose loading is projected to take longer is skipped), BENCH_LOG_LEVEL [info],
// BENCH_JSON=1 prints the rows as JSON as well.
//
// Then, when nsd, pdns_server and dnsperf are installed (or BENCH_DNS_PEERS=1; BENCH_DNS_PEERS=0
// never), the side-by-side mode of bench/dns-peers.ts: hostplane's DNS server, PowerDNS and NSD as
// processes of their own on the same zones (alone: npm run bench:dns:peers).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import type { FastifyInstance } from 'fastify';
import { CompiledQuery, sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryId, type RootOperationNode } from 'kysely';
import { benchConfig, freshBenchStore } from './store.js';
import { discard, fmt, markdownTable, sleep, pct, benchHeader, loadAverage, LOG_LEVEL, PG_URL, ACCEPT, JSONAPI } from './report.js';
import { buildApp } from '../src/app.js';
import type { Actor } from '../src/auth/actor.js';
import type { Config } from '../src/config.js';
import { openStore, type Store } from '../src/db/index.js';
import { nowIso } from '../src/db/time.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin, type Admin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { loadDemoData, type DemoCustomer, type DemoDataset } from '../src/admin/demo.js';
import { Worker, workerSettings } from '../src/queue/worker.js';
import { buildJobs } from '../src/resources/jobs.js';
import { buildDrivers } from '../src/provisioning/drivers.js';
import { DnsServer } from '../src/dns/server.js';
import { DnsRecordsRepository } from '../src/resources/dns-records/dns-records.repository.js';
import { runLoad } from './dns-load.js';
import { DnsClient, Filler, bulkRecords, insertRecords, recordCount, txtOf } from './dns-zones.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CHANGES = num('BENCH_DNS_CHANGES', 200);
const PARALLEL = num('BENCH_DNS_PARALLEL', 8);
const POLL_MS = num('BENCH_DNS_POLL_MS', 2);
/** How often the client polls the job; its `done` time is read from finished_at, not from the poll. */
const JOB_POLL_MS = 20;
const QPS_S = num('BENCH_DNS_QPS_S', 5);
const WINDOW = num('BENCH_DNS_WINDOW', 64);
const SIZES = (process.env.BENCH_DNS_SIZES ?? '10000,100000,1000000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const LIST_N = num('BENCH_DNS_LIST_N', 200);
const LIST_WARMUP = 20;
const LOAD_BUDGET_S = num('BENCH_DNS_LOAD_BUDGET_S', 180);
/** The zone whose list is timed: exactly this many records, owned by the reseller's end customer. */
const LIST_ZONE = 'zone100.example';
const LIST_ZONE_RECORDS = 100;

type EngineName = 'sqlite' | 'postgres';



// ---- the instance ------------------------------------------------------------------------------

interface Instance {
  engine: EngineName;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  data: DemoDataset;
  admin: Admin;
  dns: DnsServer | null;
  worker: Worker | null;
  /** Stops the worker and the DNS server (the list scenario runs without them). */
  stopBackground(): Promise<void>;
  close(): Promise<void>;
}

/** As test/helpers/app.ts with { worker: true, dns: true }, on a listening socket: app, DNS server on 127.0.0.1:0, then worker. */
async function startInstance(engine: EngineName): Promise<Instance> {
  const { store, databaseUrl, drop: cleanup } = await freshBenchStore(engine, PG_URL);
  const config = benchConfig(databaseUrl, 'https://api.example.com');
  const admin = buildAdmin(serviceDeps(store, config));
  const { data } = await loadDemoData(admin, config.publicBaseUrl);
  const limiter = new MemoryLimiter(config);
  const app = await buildApp(config, { store, limiter, logStream: discard() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no TCP address');
  // Started before the worker, as under `serve`: DNS jobs wait for a live DNS server.
  let dns: DnsServer | null = await DnsServer.start({ store, config, log: app.log, listen: '127.0.0.1:0' });
  let worker: Worker | null = new Worker({ store, jobs: buildJobs(), drivers: buildDrivers({ config, store }), log: app.log, ...workerSettings(config) });
  await worker.start();
  const inst: Instance = {
    engine,
    store,
    config,
    app,
    base: `http://127.0.0.1:${addr.port}`,
    data,
    admin,
    dns,
    worker,
    async stopBackground() {
      await worker?.stop();
      await dns?.stop();
      worker = dns = inst.worker = inst.dns = null;
    },
    async close() {
      await inst.stopBackground();
      await app.close();
      await limiter.close();
      await cleanup();
    },
  };
  return inst;
}

const endCustomer = (d: DemoDataset) => d.customers.find((c) => c.role === 'end-customer')!;
const reseller = (d: DemoDataset) => d.customers.find((c) => c.role === 'reseller')!;
const solo = (d: DemoDataset) => d.customers.find((c) => c.role === 'customer')!;

/** The token that may write `c.domain`: a customer's own. */
const headers = (c: DemoCustomer, body = false): Record<string, string> => ({
  authorization: `token ${c.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

// ---- 1. change → answer ------------------------------------------------------------------------

interface ChangeRow {
  engine: EngineName;
  mode: string;
  changes: number;
  /** POST sent → 202 received. */
  post: number[];
  /** POST sent → TXT answered over UDP. */
  answer: number[];
  /** POST sent → job finished_at. */
  done: number[];
  seconds: number;
}

async function oneChange(h: Instance, dns: DnsClient, owner: DemoCustomer, label: string, out: ChangeRow) {
  const name = `${label}.${owner.domain}`;
  const data = `hostplane-bench ${label}`;
  const wall0 = Date.now();
  const t0 = performance.now();
  const res = await fetch(`${h.base}/dns-records`, {
    method: 'POST',
    headers: headers(owner, true),
    body: JSON.stringify({ data: { type: 'dns-record', attributes: { domain: owner.domain, name: label, record_type: 'TXT', data } } }),
  });
  const t202 = performance.now();
  const body = (await res.json()) as { data?: { id: string } };
  if (res.status !== 202 || !body.data) throw new Error(`POST /dns-records on ${h.engine}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  const jobId = body.data.id;
  const answered = dns.until(name, 'TXT', (p) => txtOf(p).includes(data), POLL_MS, 10_000).then(() => performance.now());
  const done = (async () => {
    for (const end = Date.now() + 10_000; Date.now() < end; await sleep(JOB_POLL_MS)) {
      const r = await fetch(`${h.base}/queue-jobs/${jobId}`, { headers: headers(owner) });
      const j = (await r.json()) as { data?: { attributes: { status: string; finished_at: string | null; error: string | null } } };
      const a = j.data?.attributes;
      if (a?.status === 'done' && a.finished_at) return Date.parse(a.finished_at);
      if (a?.status === 'failed') throw new Error(`job ${jobId} failed: ${a.error}`);
    }
    throw new Error(`job ${jobId} not done within 10 s`);
  })();
  const [tAnswer, finishedAt] = await Promise.all([answered, done]);
  out.post.push(t202 - t0);
  out.answer.push(tAnswer - t0);
  out.done.push(finishedAt - wall0);
}

/**
 * `clients` clients share `changes` changes; each sends its next change once the previous one is
 * answered and done. In parallel the clients spread over the four demo zones, each as the zone's
 * owner (changes to one zone are serialised by its lock by design).
 */
async function changeRun(h: Instance, dns: DnsClient, clients: number, runLabel: string, changes = CHANGES): Promise<ChangeRow> {
  const owners = clients === 1 ? [endCustomer(h.data)] : h.data.customers;
  const row: ChangeRow = { engine: h.engine, mode: clients === 1 ? 'sequential' : `${clients} clients in parallel`, changes, post: [], answer: [], done: [], seconds: 0 };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const owner = owners[c % owners.length];
      for (let i = next++; i < changes; i = next++) await oneChange(h, dns, owner, `${runLabel}${i}`, row);
    }),
  );
  row.seconds = (performance.now() - started) / 1000;
  return row;
}

// ---- 2. queries per second ---------------------------------------------------------------------

interface QpsRow {
  engine: EngineName;
  qps: number;
  p50: number;
  p99: number;
  answered: number;
  bad: number;
  lost: number;
  /** Event-loop utilisation of the server's thread (warm-up included) and of the generator's. */
  serverElu: number;
  generatorElu: number;
}

async function qpsRun(h: Instance): Promise<QpsRow> {
  const dns = h.dns!;
  const queries: Buffer[] = [];
  // Existing names only: the demo zones' base records (API guide "DNS records").
  const questions = h.data.customers.flatMap((c) => [
    { name: c.domain, type: 'A' },
    { name: `www.${c.domain}`, type: 'A' },
    { name: `www.${c.domain}`, type: 'AAAA' },
    { name: c.domain, type: 'MX' },
    { name: c.domain, type: 'TXT' },
  ]);
  // Every query must get an answer before it is used for load.
  const client = new DnsClient(dns.port!);
  try {
    for (const q of questions) {
      const p = await client.until(q.name, q.type, () => true, 50, 2_000);
      if (p.rcode !== 'NOERROR' || !p.answers.some((a) => a.type === q.type)) throw new Error(`${q.name} ${q.type}: ${p.rcode}, ${p.answers.length} answers`);
      queries.push(dnsPacket.encode({ type: 'query', id: 0, flags: 0, questions: [q] }));
    }
  } finally {
    client.close();
  }
  const elu0 = performance.eventLoopUtilization();
  const r = await runLoad({ host: '127.0.0.1', port: dns.port!, queries, window: WINDOW, warmupMs: 1000, durationMs: QPS_S * 1000, timeoutMs: 500 });
  const serverElu = performance.eventLoopUtilization(elu0).utilization;
  return { engine: h.engine, qps: r.answered / r.seconds, p50: r.p50, p99: r.p99, answered: r.answered, bad: r.bad, lost: r.lost, serverElu, generatorElu: r.generatorElu };
}

// ---- 3. list latency ---------------------------------------------------------------------------

interface ListRow {
  engine: EngineName;
  records: number;
  as: string;
  p50: number;
  p99: number;
  max: number;
  /** Seconds spent loading records to reach this size (from the previous size). */
  loadS: number;
  index: string;
}

/** The 100-record zone: created as an operator creates it (base records, DKIM key), then topped up with records. */
async function createListZone(h: Instance) {
  const owner = endCustomer(h.data);
  await h.admin.domains.createDomain({ name: LIST_ZONE, customerId: Number(owner.id), packageId: Number(owner.package_id) });
  const have = Number(
    (await h.store.db.selectFrom('dns_records').select((eb) => eb.fn.countAll<number>().as('n')).where('domain', '=', LIST_ZONE).executeTakeFirstOrThrow()).n,
  );
  await insertRecords(h, bulkRecords(LIST_ZONE, 0, LIST_ZONE_RECORDS - have, nowIso()));
}

/** Catches the root node of every query built through this Kysely instance. */
class Capture implements KyselyPlugin {
  readonly queries: { node: RootOperationNode; queryId: QueryId }[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries.push({ node: args.node, queryId: args.queryId });
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs) {
    return args.result;
  }
}

/** The plan of the list query exactly as the repository builds it for `actor` (the service passes the ACE domain). */
async function explainList(h: Instance, actor: Actor): Promise<{ sql: string; plan: string[] }> {
  const cap = new Capture();
  const db = h.store.db.withPlugin(cap);
  await new DnsRecordsRepository(db).list(actor, { domains: [LIST_ZONE] }, null);
  const q = cap.queries[0];
  const compiled = db.getExecutor().compileQuery(q.node, q.queryId);
  if (h.engine === 'postgres') {
    const r = await h.store.db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain (analyze, costs off, timing off, summary off) ${compiled.sql}`, [...compiled.parameters]));
    return { sql: compiled.sql, plan: r.rows.map((x) => x['QUERY PLAN']) };
  }
  const r = await h.store.db.executeQuery<{ id: number; parent: number; detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
  const depth = new Map<number, number>();
  return {
    sql: compiled.sql,
    plan: r.rows.map((x) => {
      const d = (depth.get(x.parent) ?? -1) + 1;
      depth.set(x.id, d);
      return `${'  '.repeat(d)}${x.detail}`;
    }),
  };
}

/** Times GET /dns-records?filter[domain]=<zone> over HTTP: LIST_WARMUP untimed, then LIST_N timed, one at a time. */
async function timeList(h: Instance, who: DemoCustomer): Promise<number[]> {
  const url = `${h.base}/dns-records?filter[domain]=${LIST_ZONE}`;
  const get = async () => {
    const t0 = performance.now();
    const r = await fetch(url, { headers: headers(who) });
    const body = (await r.json()) as { data?: unknown[] };
    const ms = performance.now() - t0;
    if (r.status !== 200 || body.data?.length !== LIST_ZONE_RECORDS) throw new Error(`list on ${h.engine}: ${r.status}, ${body.data?.length} records`);
    return ms;
  };
  // Loading SQLite blocks this process's event loop for seconds; when it resumes, the server's
  // keep-alive timer may close the client's pooled connection just as the first request goes
  // out (ECONNRESET). That request is untimed: try it once more on a new connection.
  await get().catch(() => get());
  for (let i = 1; i < LIST_WARMUP; i++) await get();
  const out: number[] = [];
  for (let i = 0; i < LIST_N; i++) out.push(await get());
  return out;
}

/** How the plan reaches dns_records: the index it searches, or a full scan. */
const indexOf = (plan: string[]) => {
  const text = plan.join('\n');
  if (/^\s*SCAN dns_records\b(?! USING)|Seq Scan on dns_records\b/im.test(text)) return 'FULL SCAN of dns_records';
  const m =
    /SEARCH dns_records USING (?:COVERING )?INDEX (\w+)/i.exec(text) ??
    /Index (?:Only )?Scan using (\w+) on dns_records\b/i.exec(text) ??
    /Bitmap Index Scan on (dns_records\w*)/i.exec(text);
  return m ? m[1] : '?';
};

async function listRuns(h: Instance, log: (s: string) => void): Promise<ListRow[]> {
  await createListZone(h);
  // The bulk zones belong alternately to the blog end customer (in the reseller's scope) and to the independent customer.
  const filler = new Filler(h, [h.data.customers.find((c) => c.role === 'end-customer' && c !== endCustomer(h.data))!, solo(h.data)]);
  const rows: ListRow[] = [];
  const actors: [string, DemoCustomer, Actor][] = [
    ['end customer', endCustomer(h.data), { customerId: Number(endCustomer(h.data).id), isReseller: false, contactId: null, tokenId: null }],
    ['reseller', reseller(h.data), { customerId: Number(reseller(h.data).id), isReseller: true, contactId: null, tokenId: null }],
  ];
  let rate = 0; // records per second of loading so far
  for (const size of SIZES) {
    const have = await recordCount(h);
    if (rate > 0 && (size - have) / rate > LOAD_BUDGET_S) {
      log(`  ${h.engine}: ${size} records skipped: loading ${size - have} more would take ≈ ${((size - have) / rate).toFixed(1)} s at ${rate.toFixed(0)} records/s (budget ${LOAD_BUDGET_S} s)`);
      continue;
    }
    const loadS = await filler.fill(size);
    if (size > have) rate = (size - have) / loadS;
    const count = await recordCount(h);
    log(`  ${h.engine}: ${count} records in the store (loaded ${size - have} in ${loadS.toFixed(2)} s)`);
    for (const [as, who, actor] of actors) {
      const plan = await explainList(h, actor);
      const ms = await timeList(h, who);
      rows.push({ engine: h.engine, records: count, as, p50: pct(ms, 50), p99: pct(ms, 99), max: Math.max(...ms), loadS, index: indexOf(plan.plan) });
      log(`  plan as ${as}:\n${plan.plan.map((l) => `    ${l}`).join('\n')}`);
      if (size === SIZES[0] && as === 'reseller') log(`  SQL (${h.engine}): ${plan.sql}`);
    }
  }
  return rows;
}

// ---- output ------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const cpus = os.cpus();
  console.log(
    `${benchHeader('DNS')}, ` +
      `load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`,
  );
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const log = (s: string) => console.log(s);
  const changeRows: ChangeRow[] = [];
  const qpsRows: QpsRow[] = [];
  const listRows: ListRow[] = [];
  for (const engine of (PG_URL ? ['sqlite', 'postgres'] : ['sqlite']) as EngineName[]) {
    const h = await startInstance(engine);
    try {
      log(`${engine}: app on ${h.base}, DNS server on 127.0.0.1:${h.dns!.port}, worker concurrency ${h.config.jobs.concurrency}`);
      const client = new DnsClient(h.dns!.port!);
      try {
        // A few changes first, untimed: connections, statement caches, JIT.
        await changeRun(h, client, 1, 'warm', 10);
        changeRows.push(await changeRun(h, client, 1, 'seq'));
        if (PARALLEL > 1) changeRows.push(await changeRun(h, client, PARALLEL, 'par'));
      } finally {
        client.close();
      }
      qpsRows.push(await qpsRun(h));
      await h.stopBackground();
      listRows.push(...(await listRuns(h, log)));
    } finally {
      await h.close();
    }
  }

  console.log();
  console.log(`1. POST /dns-records (TXT) → answered over UDP (polled every ${POLL_MS} ms) and job done (its finished_at), ms from sending the POST`);
  console.log(
    markdownTable(
      ['engine', 'mode', 'changes', 'POST p50', 'answer p50', 'answer p99', 'answer max', 'done p50', 'done p99', 'changes/s'],
      changeRows.map((r) => [
        r.engine, r.mode, String(r.answer.length), fmt(r.post.length ? pct(r.post, 50) : NaN, 1), fmt(pct(r.answer, 50), 1), fmt(pct(r.answer, 99), 1),
        fmt(Math.max(...r.answer), 1), fmt(pct(r.done, 50)), fmt(pct(r.done, 99)), fmt(r.answer.length / r.seconds, 1),
      ]),
      2,
    ),
  );
  console.log();
  console.log(`2. DNS queries per second: server on the main thread, generator in a worker thread (${WINDOW} outstanding, ${QPS_S} s after 1 s warm-up)`);
  console.log(
    markdownTable(
      ['engine', 'qps', 'p50 ms', 'p99 ms', 'answered', 'bad', 'lost', 'server busy', 'generator busy'],
      qpsRows.map((r) => [
        r.engine, fmt(r.qps), fmt(r.p50, 2), fmt(r.p99, 2), String(r.answered), String(r.bad), String(r.lost), `${fmt(r.serverElu * 100)}%`, `${fmt(r.generatorElu * 100)}%`,
      ]),
      1,
    ),
  );
  console.log('   busy = event-loop utilisation of the thread (the server\'s includes the 1 s warm-up)');
  if (cpus.length <= 2) console.log(`   (${cpus.length} cores: the generator takes the other core, so the server has one)`);
  console.log();
  console.log(`3. GET /dns-records?filter[domain]=${LIST_ZONE} (${LIST_ZONE_RECORDS} records), ${LIST_N} requests after ${LIST_WARMUP} warm-up, one at a time, over HTTP`);
  console.log(
    markdownTable(
      ['engine', 'as', 'records in store', 'p50 ms', 'p99 ms', 'max ms', 'dns_records via', 'load s'],
      listRows.map((r) => [r.engine, r.as, String(r.records), fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.max, 1), r.index, fmt(r.loadS, 2)]),
      2,
    ),
  );

  console.log();
  const seq = changeRows.filter((r) => r.mode === 'sequential');
  const missed = [
    ...seq.filter((r) => pct(r.answer, 50) >= 200 || pct(r.answer, 99) >= 1000).map((r) => `change → answer on ${r.engine} (p50 < 200 ms, p99 < 1 s)`),
    ...listRows.filter((r) => r.p50 >= 10).map((r) => `list on ${r.engine} at ${r.records} as ${r.as} (p50 < 10 ms)`),
  ];
  console.log(missed.length ? `targets missed: ${missed.join('; ')}` : 'targets met: change → answer p50 < 200 ms and p99 < 1 s; list p50 < 10 ms at every size');
  if (process.env.BENCH_JSON) {
    const summary = (r: ChangeRow) => ({ ...r, post: undefined, answer: undefined, done: undefined, answerP50: pct(r.answer, 50), answerP99: pct(r.answer, 99), doneP50: pct(r.done, 50), doneP99: pct(r.done, 99) });
    console.log(JSON.stringify({ changes: changeRows.map(summary), qps: qpsRows, list: listRows }, null, 1));
  }
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
  // Side by side with PowerDNS and NSD, in processes of their own: bench/dns-peers.ts.
  const peers = await import('./dns-peers.js');
  console.log();
  if (peers.peersWanted()) await peers.runPeers();
  else {
    const p = peers.peerPrograms();
    const missing = Object.entries({ nsd: p.nsd, pdns_server: p.pdns, dnsperf: p.dnsperf }).filter(([, v]) => !v).map(([k]) => k);
    console.log(`(side by side with PowerDNS and NSD skipped: ${process.env.BENCH_DNS_PEERS === '0' ? 'BENCH_DNS_PEERS=0' : `${missing.join(', ')} not installed; BENCH_DNS_PEERS=1 runs it without them`})`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
