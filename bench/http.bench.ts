// HTTP benchmark (docs/performance.md "HTTP API"): GET /domains/<name> and GET /customers of
// hostplane against a bare Fastify JSON route measured in the same run, on SQLite and, when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL. Prints req/s, p50, p99 and the
// ratio to the baseline's req/s.
//
//   npm run bench
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench
//
// Settings (environment): BENCH_DURATION_S [5], BENCH_WARMUP_S [1], BENCH_CONNECTIONS [10],
// BENCH_LOG_LEVEL [info, the production default; log lines go to a discarding stream],
// BENCH_JSON=1 prints the rows as JSON as well, BENCH_COMPARE=<dir>: a checkout of another
// commit (with node_modules, or a link to this one's) whose app is measured in the same run, each
// of its scenarios next to this tree's (which goes first alternates), and "x compared" is this
// tree's req/s ÷ its req/s:
//
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/
//   BENCH_COMPARE=/tmp/before npm run bench
//
// Everything runs in one process: the servers on the main thread, the load generator
// (autocannon) in a worker thread, so the two do not share an event loop.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { discard, fmt, markdownTable, benchHeader, loadAverage, LOG_LEVEL, PG_URL, ACCEPT } from './report.js';
import { THIS_APP_TREE, loadAppTree, type AppTree } from './compare.js';
import { openStore, type Store } from '../src/db/index.js';
import type { DemoDataset } from '../src/admin/demo.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const COMPARE = process.env.BENCH_COMPARE ? path.resolve(process.env.BENCH_COMPARE) : null;

interface Row {
  scenario: string;
  engine: string;
  path: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

interface Target {
  scenario: string;
  engine: string;
  base: string;
  path: string;
  headers: Record<string, string>;
}


async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${addr.port}`;
}

async function startBaseline(): Promise<{ base: string; close: () => Promise<void> }> {
  const app = Fastify();
  app.get('/baseline', async () => ({ data: { type: 'greeting', id: '1', attributes: { hello: 'world' } } }));
  const base = await listen(app);
  return { base, close: () => app.close() };
}

interface Hostplane {
  engine: string;
  /** null: this tree; else the BENCH_COMPARE checkout. */
  tree: string | null;
  base: string;
  /** The demo dataset: a reseller, its two end customers and an independent customer. */
  data: DemoDataset;
  close: () => Promise<void>;
}

/** What an app is built from: this tree's modules, or those of the BENCH_COMPARE checkout. */
type Tree = AppTree;
const THIS_TREE: Tree = THIS_APP_TREE;
const loadTree = loadAppTree;

async function startHostplane(engine: 'sqlite' | 'postgres', tree: Tree = THIS_TREE, dir: string | null = null): Promise<Hostplane> {
  const { store, databaseUrl, drop: cleanup } = await tree.freshBenchStore(engine, PG_URL);
  const config = tree.benchConfig(databaseUrl, 'https://api.example.com');
  const { data } = await tree.loadDemoData(await tree.makeAdmin(store, config), 'https://api.example.com');
  const limiter = new tree.MemoryLimiter(config);
  const app = await tree.buildApp(config, { store, limiter, logStream: discard() });
  const base = await listen(app);
  return {
    engine,
    tree: dir,
    base,
    data,
    async close() {
      await app.close();
      await limiter.close();
      await cleanup();
    },
  };
}

/** One request as a client sends it; the bench refuses to measure anything but a 200. */
async function probe(t: Target): Promise<{ status: number; body: string }> {
  const res = await fetch(t.base + t.path, { headers: t.headers });
  return { status: res.status, body: await res.text() };
}

async function load(t: Target, seconds: number) {
  return autocannon({
    url: t.base + t.path,
    headers: t.headers,
    connections: CONNECTIONS,
    duration: seconds,
    workers: 1,
  });
}

async function measure(t: Target, warmupS = WARMUP_S): Promise<Row> {
  const first = await probe(t);
  if (first.status !== 200) throw new Error(`${t.scenario} on ${t.engine}: ${first.status} ${first.body.slice(0, 300)}`);
  if (warmupS > 0) await load(t, warmupS);
  const r = await load(t, DURATION_S);
  return {
    scenario: t.scenario,
    engine: t.engine,
    path: t.path,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

/** The scenarios of one hostplane instance, as the reseller: an end customer's domain, the customer list. */
async function scenarios(h: Hostplane): Promise<Target[]> {
  const reseller = h.data.customers.find((c) => c.role === 'reseller')!;
  const endCustomer = h.data.customers.find((c) => c.role === 'end-customer')!;
  const headers = { authorization: `token ${reseller.token}`, accept: ACCEPT };
  return [
    { scenario: 'GET /domains/{name}', engine: h.engine, base: h.base, path: `/domains/${endCustomer.domain}`, headers },
    { scenario: 'GET /customers', engine: h.engine, base: h.base, path: '/customers', headers },
  ];
}


interface Paired extends Row {
  /** req/s of the baseline measured right before this scenario. */
  baselineRps: number;
  /** With BENCH_COMPARE: the same scenario of the compared checkout, measured next to this one. */
  compared?: Paired;
}

function table(rows: Paired[]): string {
  const head = ['scenario', 'engine', 'req/s', 'p50 ms', 'p99 ms', 'baseline req/s', 'x baseline', 'non-2xx'];
  if (COMPARE) head.push('compared req/s', 'its x baseline', 'x compared');
  const body = rows.map((r) => [
    r.scenario,
    r.engine,
    fmt(r.rps),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.baselineRps),
    fmt(r.rps / r.baselineRps, 2),
    String(r.non2xx + r.errors + (r.compared ? r.compared.non2xx + r.compared.errors : 0)),
    ...(COMPARE ? (r.compared ? [fmt(r.compared.rps), fmt(r.compared.rps / r.compared.baselineRps, 2), fmt(r.rps / r.compared.rps, 2)] : ['', '', '']) : []),
  ]);
  return markdownTable(head, body, 2);
}

async function main() {
  const started = Date.now();
  console.log(
    `${benchHeader('HTTP')}, ` +
      `${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per scenario, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`,
  );
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  if (COMPARE) console.log(`compared with the checkout in ${COMPARE}, each scenario next to this tree's`);

  const baseline = await startBaseline();
  const baseTarget: Target = { scenario: 'baseline GET (bare Fastify)', engine: '-', base: baseline.base, path: '/baseline', headers: { accept: 'application/json' } };
  const instances: Hostplane[] = [];
  const rows: Paired[] = [];
  try {
    const compareTree = COMPARE ? await loadTree(COMPARE) : null;
    const engines: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
    for (const engine of engines) {
      instances.push(await startHostplane(engine));
      if (compareTree) instances.push(await startHostplane(engine, compareTree, COMPARE));
    }
    // Each scenario is paired with a baseline run just before it, so a machine that gets
    // busier or quieter during the run moves both numbers of a ratio together.
    const baselines: Row[] = [];
    const paired = async (t: Target): Promise<Paired> => {
      const b = await measure(baseTarget, baselines.length ? 0 : WARMUP_S);
      baselines.push(b);
      return { ...(await measure(t)), baselineRps: b.rps };
    };
    for (const h of instances.filter((i) => i.tree === null)) {
      const other = instances.find((i) => i.tree !== null && i.engine === h.engine);
      const theirs = other ? await scenarios(other) : [];
      for (const [i, t] of (await scenarios(h)).entries()) {
        // Which tree goes first alternates, so neither gains from the order.
        const first = other && i % 2 === 1 ? await paired(theirs[i]) : undefined;
        const row = await paired(t);
        if (other) row.compared = first ?? (await paired(theirs[i]));
        rows.push(row);
      }
    }
    const mean = baselines.reduce((a, b) => a + b.rps, 0) / baselines.length;
    const baseRow: Paired = {
      ...baselines[0],
      scenario: `${baseTarget.scenario}, ${baselines.length} runs`,
      rps: mean,
      p50: Math.max(...baselines.map((b) => b.p50)),
      p99: Math.max(...baselines.map((b) => b.p99)),
      non2xx: baselines.reduce((a, b) => a + b.non2xx, 0),
      errors: baselines.reduce((a, b) => a + b.errors, 0),
      baselineRps: mean,
    };
    console.log();
    console.log(table([baseRow, ...rows]));
    console.log();
    console.log('latency resolution 1 ms (autocannon); "x baseline" = req/s ÷ the baseline run just before it');
    const bad = rows.filter((r) => r.non2xx + r.errors > 0);
    if (bad.length) console.log(`!! non-2xx responses or errors in: ${bad.map((r) => `${r.scenario} (${r.engine})`).join(', ')}`);
    const sqliteLow = rows.filter((r) => r.engine === 'sqlite' && r.rps / r.baselineRps < 0.5);
    console.log(
      sqliteLow.length
        ? `target missed (< 0.5 × baseline on SQLite): ${sqliteLow.map((r) => r.scenario).join(', ')}`
        : 'target met: every SQLite scenario ≥ 0.5 × baseline',
    );
    if (process.env.BENCH_JSON) console.log(JSON.stringify(rows, null, 1));
    console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s, load average now ${loadAverage()}`);
  } finally {
    for (const h of instances) await h.close();
    await baseline.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
