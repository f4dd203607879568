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
import { fmt, markdownTable, pct, mean, benchHeader, loadAverage, runBench, LOG_LEVEL, PG_URL } from './report.js';
import { type ClientSettings } from './databases-client.js';
import { CREATES, WARMUP, POLL_MS, LOGIN_ATTEMPTS, HTTP_CLIENT, COMPARE, JOB_POLL_MS, LOGIN_LIMIT_MS, MARIADB_URL, BASE_URL, TARGET_P50_MS, TARGET_X_FLOOR, PREFIX, type EngineName, signalled, mariadb, dropBenchObjects, serverVersion } from './databases/settings.js';
import { loadTree } from './databases/instance.js';
import { Client } from './databases/client.js';
import { type ProductRun, type FloorRun, type EngineResult, engineRun } from './databases/runs.js';

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
    if (signalled.interrupted) process.exit(130);
    signalled.interrupted = true;
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

runBench(main, () => signalled.interrupted);
