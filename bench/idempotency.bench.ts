// Safe-retries benchmark (docs/decisions/0026-safe-retries.md; API guide "Safe retries"): what an
// Idempotency-Key costs a write. POST /dns-records (a new TXT record each time) with a fresh key
// against the same request without one, on SQLite and, when BENCH_DATABASE_URL or TEST_DATABASE_URL
// is set, on PostgreSQL; p50 and p99 of each and the ratio of the p50s.
//
//   npm run bench:idempotency
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:idempotency
//
// Paired: rounds of BENCH_BATCH [50] requests without a key and BENCH_BATCH with one, which goes
// first alternating, BENCH_ROUNDS [20] rounds after one untimed round, BENCH_CONCURRENCY [4]
// requests in flight. No worker runs: the jobs wait, what is timed is the API's answer.
//
// Variants: each runs the same pairs in an app of its own, built with these settings on top of
// the bench's. BENCH_VARIANTS adds some as JSON, e.g. a switched-off audit trail once it has its
// setting: BENCH_VARIANTS='{"audit off":{"AUDIT_TRAIL":"off"}}' (the name is the variant's label).
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { benchHeader, discard, fmt, loadAverage, markdownTable, pct, ACCEPT, JSONAPI, PG_URL, LOG_LEVEL } from './report.js';
import { benchConfig, freshBenchStore } from './store.js';
import { buildApp } from '../src/app.js';
import { MemoryLimiter } from '../src/limits/limiter.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { loadDemoData } from '../src/admin/demo.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
/** Settings of each variant on top of the bench's own: the default app, and BENCH_VARIANTS. */
const VARIANTS: Record<string, Record<string, string>> = { default: {}, ...JSON.parse(process.env.BENCH_VARIANTS ?? '{}') };

interface Target {
  base: string;
  token: string;
  domain: string;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${addr.port}`;
}

async function start(engine: 'sqlite' | 'postgres', env: Record<string, string>) {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const config = benchConfig(databaseUrl, 'https://api.example.com', env);
  const { data } = await loadDemoData(buildAdmin(serviceDeps(store, config)), 'https://api.example.com');
  const limiter = new MemoryLimiter(config);
  const app = await buildApp(config, { store, limiter, logStream: discard() });
  const customer = data.customers.find((c) => c.role === 'customer')!;
  const target: Target = { base: await listen(app), token: customer.token, domain: customer.domain };
  return {
    target,
    async close() {
      await app.close();
      await limiter.close();
      await drop();
    },
  };
}

let serial = 0;
/** One POST of a new record; its latency in ms (µs resolution). Anything but a 202 ends the bench. */
async function post(t: Target, withKey: boolean): Promise<number> {
  const body = JSON.stringify({ data: { type: 'dns-record', attributes: { domain: t.domain, name: `_bench${serial++}`, record_type: 'TXT', data: 'v', ttl: 300 } } });
  const headers: Record<string, string> = { authorization: `token ${t.token}`, accept: ACCEPT, 'content-type': JSONAPI };
  if (withKey) headers['idempotency-key'] = crypto.randomUUID();
  const started = performance.now();
  const r = await fetch(`${t.base}/dns-records`, { method: 'POST', headers, body });
  const text = await r.text();
  const ms = performance.now() - started;
  if (r.status !== 202) throw new Error(`POST /dns-records ${withKey ? 'with' : 'without'} a key: ${r.status} ${text.slice(0, 300)}`);
  return ms;
}

/** `n` requests, CONCURRENCY at a time; their latencies. */
async function batch(t: Target, withKey: boolean, n: number): Promise<number[]> {
  const out: number[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) out.push(await post(t, withKey));
    }),
  );
  return out;
}

async function paired(t: Target) {
  await batch(t, false, BATCH);
  await batch(t, true, BATCH);
  const without: number[] = [];
  const withKey: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const first = round % 2 === 0;
    if (first) without.push(...(await batch(t, false, BATCH)));
    withKey.push(...(await batch(t, true, BATCH)));
    if (!first) without.push(...(await batch(t, false, BATCH)));
  }
  return { without, withKey };
}

async function main() {
  const started = Date.now();
  console.log(`${benchHeader('safe retries')}, ${ROUNDS} rounds × ${BATCH} requests each way, ${CONCURRENCY} in flight, load average ${loadAverage()}, LOG_LEVEL=${LOG_LEVEL}`);
  if (!PG_URL) console.log('(PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
  const rows: string[][] = [];
  for (const engine of PG_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
    for (const [variant, env] of Object.entries(VARIANTS)) {
      const app = await start(engine, env);
      try {
        const { without, withKey } = await paired(app.target);
        const [p50a, p50b] = [pct(without, 50), pct(withKey, 50)];
        rows.push([engine, variant, fmt(p50a, 2), fmt(pct(without, 99), 2), fmt(p50b, 2), fmt(pct(withKey, 99), 2), fmt(p50b / p50a, 2)]);
      } finally {
        await app.close();
      }
    }
  }
  console.log();
  console.log(markdownTable(['engine', 'variant', 'p50 ms without key', 'p99 ms without', 'p50 ms with key', 'p99 ms with', 'x p50 (with ÷ without)'], rows, 2));
  console.log();
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s, load average now ${loadAverage()}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
