// What an automation's safeguards cost a write (docs/performance.md "Audit trail and safe
// retries"; docs/decisions/0026-safe-retries.md, 0029-audit-trail.md): POST /dns-records with the
// audit trail on and an Idempotency-Key on every request ("on") against the same with the audit
// trail off (AUDIT_LOG=off) and no key ("off"), on SQLite and, when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set, on PostgreSQL. The goal: p50 "on" at most 10 % above p50 "off".
// BENCH_KEYS=0 sends no keys to either: the audit trail alone.
//
//   npm run bench            (after the HTTP read bench)
//   npm run bench:audit      (this one alone)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:audit
//
// Two instances per engine, each on a fresh store with the demo dataset, both listening; the load
// generator (bench/audit-load.ts) runs in a worker thread. Each round sends BENCH_AUDIT_REQUESTS
// POSTs (TXT records with new names in an end customer's zone) to one instance and then to the
// other, the order alternating from round to round, so a machine that gets busier or quieter moves
// both alike; BENCH_AUDIT_ROUNDS rounds per number of connections in BENCH_AUDIT_CONNECTIONS.
// Prints p50, p99 and req/s of each, and "on ÷ off" of the pooled p50 and the median of the
// rounds' p50 ratios (each round's pair measured back to back: the figure a burst of other work on
// a shared machine moves least). No worker runs: the jobs stay pending, alike for both.
//
// Settings (environment): BENCH_AUDIT_REQUESTS [400], BENCH_AUDIT_ROUNDS [30],
// BENCH_AUDIT_CONNECTIONS [1,8], BENCH_AUDIT_WARMUP [200], BENCH_AUDIT_ENGINES [sqlite,postgres], BENCH_KEYS [1], BENCH_LOG_LEVEL [info],
// BENCH_JSON=1.
import type { FastifyInstance } from 'fastify';
import { benchConfig, freshBenchStore } from './store.js';
import { benchHeader, discard, fmt, loadAverage, markdownTable, pct, runBench, LOG_LEVEL, PG_URL } from './report.js';
import { runPosts, type PostRun } from './audit-load.js';
import { buildApp } from '../src/app.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { loadDemoData } from '../src/admin/demo.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const REQUESTS = num('BENCH_AUDIT_REQUESTS', 400);
const ROUNDS = num('BENCH_AUDIT_ROUNDS', 30);
const WARMUP = num('BENCH_AUDIT_WARMUP', 200);
const KEYS = process.env.BENCH_KEYS !== '0';
const CONNECTIONS = (process.env.BENCH_AUDIT_CONNECTIONS ?? '1,8').split(',').map(Number).filter((n) => n > 0);

type Engine = 'sqlite' | 'postgres';
type Audit = 'on' | 'off';

interface Instance {
  audit: Audit;
  app: FastifyInstance;
  base: string;
  token: string;
  domain: string;
  close(): Promise<void>;
}

let interrupted = false;
process.once('SIGINT', () => (interrupted = true));

async function start(engine: Engine, audit: Audit): Promise<Instance> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const config = benchConfig(databaseUrl, 'https://api.example.com', { AUDIT_LOG: audit });
  const { data } = await loadDemoData(buildAdmin(serviceDeps(store, config)), config.publicBaseUrl);
  const limiter = new MemoryLimiter(config);
  const app = await buildApp(config, { store, limiter, logStream: discard() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no TCP address');
  const shop = data.customers.find((c) => c.role === 'end-customer')!;
  return {
    audit,
    app,
    base: `http://127.0.0.1:${addr.port}`,
    token: shop.token,
    domain: shop.domain,
    async close() {
      await app.close();
      await limiter.close();
      await drop();
    },
  };
}

/** Sends `count` POSTs over `connections` connections; names carry `tag`, so every record is new. */
const load = (i: Instance, connections: number, count: number, tag: string): Promise<PostRun> =>
  runPosts({ base: i.base, token: i.token, domain: i.domain, connections, count, tag, keys: KEYS && i.audit === 'on' });

interface Row {
  engine: Engine;
  connections: number;
  audit: Audit;
  latencies: number[];
  seconds: number;
  failed: number;
  /** p50 of each round, in round order. */
  roundP50: number[];
}

async function measure(engine: Engine, on: Instance, off: Instance, connections: number): Promise<[Row, Row]> {
  const rows: Record<Audit, Row> = {
    on: { engine, connections, audit: 'on', latencies: [], seconds: 0, failed: 0, roundP50: [] },
    off: { engine, connections, audit: 'off', latencies: [], seconds: 0, failed: 0, roundP50: [] },
  };
  for (const i of [on, off]) await load(i, connections, WARMUP, `w${connections}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const i of round % 2 === 0 ? [on, off] : [off, on]) {
      if (interrupted) throw new Error('interrupted');
      const r = await load(i, connections, REQUESTS, `r${connections}-${round}`);
      const row = rows[i.audit];
      row.latencies.push(...r.latencies);
      row.seconds += r.seconds;
      row.failed += r.failed;
      row.roundP50.push(pct(r.latencies, 50));
    }
  }
  return [rows.on, rows.off];
}

function table(pairs: [Row, Row][]): string {
  const head = ['engine', 'connections', 'audit', 'p50 ms', 'p99 ms', 'req/s', 'p50 on ÷ off', 'median of rounds', 'req/s on ÷ off', 'failed'];
  const body = pairs.flatMap(([on, off]) => {
    const rps = (r: Row) => r.latencies.length / r.seconds;
    const roundRatios = on.roundP50.map((p, i) => p / off.roundP50[i]);
    return [on, off].map((r) => [
      r.engine, String(r.connections), r.audit, fmt(pct(r.latencies, 50), 2), fmt(pct(r.latencies, 99), 2), fmt(rps(r)),
      r === on ? fmt(pct(on.latencies, 50) / pct(off.latencies, 50), 3) : '',
      r === on ? fmt(pct(roundRatios, 50), 3) : '',
      r === on ? fmt(rps(on) / rps(off), 3) : '',
      String(r.failed),
    ]);
  });
  return markdownTable(head, body, 3);
}

async function main() {
  console.log(`${benchHeader(KEYS ? 'audit trail and idempotency keys' : 'audit trail')}, POST /dns-records, ${ROUNDS} rounds × ${REQUESTS} requests per instance and connection count, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`);
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const engines = (process.env.BENCH_AUDIT_ENGINES ?? 'sqlite,postgres').split(',').filter((e): e is Engine => e === 'sqlite' || (e === 'postgres' && PG_URL !== undefined));
  const pairs: [Row, Row][] = [];
  for (const engine of engines) {
    const on = await start(engine, 'on');
    const off = await start(engine, 'off');
    try {
      for (const c of CONNECTIONS) pairs.push(await measure(engine, on, off, c));
    } finally {
      await on.close();
      await off.close();
    }
  }
  console.log(`\n${table(pairs)}\n\nload average after: ${loadAverage()}`);
  if (process.env.BENCH_JSON === '1') {
    console.log(JSON.stringify(pairs.flat().map((r) => ({ engine: r.engine, connections: r.connections, audit: r.audit, p50: pct(r.latencies, 50), p99: pct(r.latencies, 99), rps: r.latencies.length / r.seconds, failed: r.failed, roundP50: r.roundP50 }))));
  }
}

runBench(main, () => interrupted);
