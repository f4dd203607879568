// The DNS side-by-side bench's results and the tables it prints of them.
import os from 'node:os';
import { fmt, loadAverage, markdownTable, pct } from '../report.js';
import type { Memory } from './processes.js';
import type { PerfRun } from './queries.js';
import { CLIENT_CORE, OUTSTANDING, RATE, RATE_SECONDS, RSS_LOAD_S, RUNS, SECONDS, SERVER_CORE, WARMUP_S } from './settings.js';

/** The median of the runs' `get`; NaN for none. */
export const median = (runs: PerfRun[], get: (r: PerfRun) => number | undefined) => pct(runs.map(get).filter((x): x is number => x !== undefined && Number.isFinite(x)), 50);

// ---- results -----------------------------------------------------------------------------------

export type ServerName = 'hostplane' | 'PowerDNS' | 'NSD' | 'NSD secondary' | 'hostplane (dgram)';

export interface ServerResult {
  server: ServerName;
  /** How it was started. */
  how: string;
  startS?: number;
  memory?: Memory;
  /** Every round's run: full speed on each mix, and the steady rate. */
  qps100: PerfRun[];
  qps10k: PerfRun[];
  steady: PerfRun[];
  change?: { n: number; p50: number; p99: number; max: number; /** hostplane: POST sent → 202 received, p50. */ postP50?: number };
  /** Questions of the check whose answers differ from hostplane's, and the first few. */
  differ?: { checked: number; count: number; examples: string[] };
  big?: { records: number; zones: number; startS: number; serving: Memory; afterLoad: Memory; load: PerfRun };
  /** NSD secondary: spawn → every zone at hostplane's serial. */
  transferS?: number;
  skipped?: string;
}

// ---- output ------------------------------------------------------------------------------------

export function report(results: ServerResult[], load0: number[], perf: boolean, bigRecords: number, bigZones: number) {
  const [hp, pdns, nsd, sec, dgram] = results;
  const cell = (r: ServerResult, v: number | undefined, digits = 0) => (r.skipped ? 'skipped' : v === undefined || !Number.isFinite(v) ? '–' : fmt(v, digits));
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b, 2)}×` : '–');
  type Row = [string, (r: ServerResult) => number | undefined, number];
  const rows: Row[] = [
    ...(perf
      ? ([
          ['queries/s, 100-record zone (A, TXT, NXDOMAIN mix)', (r) => median(r.qps100, (x) => x.qps), 0],
          ['queries/s, 10k-record zone (same mix)', (r) => median(r.qps10k, (x) => x.qps), 0],
          [`p99 ms at a steady ${RATE} q/s (100-record zone mix)`, (r) => median(r.steady, (x) => x.p99Ms), 2],
        ] as Row[])
      : []),
    ['change → first answer in the 10k-record zone, p50 ms', (r) => r.change?.p50, 1],
    ...(bigRecords
      ? ([
          [`RSS MB serving ${bigRecords} records (${bigZones} zones), once serving`, (r) => r.big?.serving.rssMb, 0],
          [`RSS MB after ${RSS_LOAD_S} s of queries`, (r) => r.big?.afterLoad.rssMb, 0],
          [`start → serving ${bigRecords} records, s`, (r) => r.big?.startS, 2],
        ] as Row[])
      : []),
  ];
  const body = rows.map(([label, get, digits]) => [label, cell(hp, get(hp), digits), cell(pdns, get(pdns), digits), cell(nsd, get(nsd), digits), ratio(get(hp), get(pdns)), ratio(get(hp), get(nsd))]);
  if (perf) {
    for (const [label, key] of [['100-record zone', 'qps100'], ['10k-record zone', 'qps10k']] as const) {
      const a = median(hp[key], (x) => x.qps);
      const b = median(sec[key], (x) => x.qps);
      body.push([`queries/s through an NSD secondary fed by hostplane, ${label}`, cell(hp, a), '', cell(sec, b), '', ratio(a, b)]);
    }
  }
  console.log();
  console.log(
    `Side by side: every server pinned to core ${SERVER_CORE}, dnsperf to core ${CLIENT_CORE}; queries/s and p99 are the median of ${RUNS} round${RUNS === 1 ? '' : 's'}; ` +
      `ratios = hostplane's figure ÷ the peer's (q/s: above 1 is faster; ms, MB, s: above 1 is more)`,
  );
  console.log(markdownTable(['measure', 'hostplane', 'PowerDNS', 'NSD', 'hostplane ÷ PowerDNS', 'hostplane ÷ NSD'], body, 1));
  if (perf && !dgram.skipped) {
    console.log();
    console.log("hostplane's UDP read in batches (the native reader) and by node's dgram (DNS_UDP_BATCH=off), in the same rounds");
    const dg = (get: (r: PerfRun) => number | undefined, runs: (r: ServerResult) => PerfRun[], digits: number) => [cell(hp, median(runs(hp), get), digits), cell(dgram, median(runs(dgram), get), digits), ratio(median(runs(hp), get), median(runs(dgram), get))];
    console.log(
      markdownTable(
        ['measure', 'batch', 'dgram', 'batch ÷ dgram'],
        [
          ['queries/s, 100-record zone', ...dg((x) => x.qps, (r) => r.qps100, 0)],
          ['queries/s, 10k-record zone', ...dg((x) => x.qps, (r) => r.qps10k, 0)],
          [`p50 ms at ${RATE} q/s`, ...dg((x) => x.p50Ms, (r) => r.steady, 3)],
          [`p99 ms at ${RATE} q/s`, ...dg((x) => x.p99Ms, (r) => r.steady, 3)],
        ],
        1,
      ),
    );
  }
  for (const r of results) if (r.skipped) console.log(`${r.server}: skipped (${r.skipped})`);
  if (sec.transferS !== undefined) console.log(`NSD secondary: every zone transferred from hostplane (AXFR, TSIG) and served ${fmt(sec.transferS, 2)} s after NSD started`);
  if (!perf) console.log('queries/s and p99: skipped (dnsperf is not installed)');

  const runs = results.flatMap((r) => [...r.qps100, ...r.qps10k, ...r.steady, r.big?.load].filter((x): x is PerfRun => !!x && x.load !== 'none'));
  if (runs.length) {
    console.log();
    console.log(`dnsperf runs (-c 1 -T 1 -q ${OUTSTANDING}; full speed ${SECONDS} s, the first round after ${WARMUP_S} s untimed; steady rate ${RATE_SECONDS} s with -v, p50/p99/max from its per-query latencies)`);
    console.log(
      markdownTable(
        ['server', 'round', 'load', 'q/s', 'sent', 'completed', 'lost', 'avg ms', 'p50 ms', 'p99 ms', 'max ms', 'response codes'],
        runs.map((x) => [x.server, x.round === undefined ? '' : String(x.round), x.load, fmt(x.qps), String(x.sent), String(x.completed), String(x.lost), fmt(x.avgMs, 3), x.p50Ms === undefined ? '' : fmt(x.p50Ms, 3), x.p99Ms === undefined ? '' : fmt(x.p99Ms, 3), x.maxMs === undefined ? '' : fmt(x.maxMs, 2), x.rcodes]),
        3,
      ),
    );
  }
  console.log();
  console.log('Servers: start, memory, answers');
  console.log(
    markdownTable(
      ['server', 'started as', 'start → serving s (small store)', 'RSS MB (small store)', 'processes', 'PSS MB, all processes', 'change → answer p50 / p99 / max ms', 'answers ≠ hostplane\'s'],
      results.map((r) => [
        r.server,
        r.how,
        r.skipped ? 'skipped' : fmt(r.startS ?? r.transferS ?? NaN, 2),
        r.memory ? `${fmt(r.memory.rssMb)} (${r.memory.process})` : '–',
        r.memory ? String(r.memory.processes) : '–',
        r.memory ? fmt(r.memory.pssMb) : '–',
        r.change ? `${fmt(r.change.p50, 1)} / ${fmt(r.change.p99, 1)} / ${fmt(r.change.max, 1)} (${r.change.n}${r.change.postP50 === undefined ? '' : `; POST → 202 p50 ${fmt(r.change.postP50, 1)}`})` : '–',
        r.server === 'hostplane' ? '(reference)' : r.differ ? `${r.differ.count} of ${r.differ.checked}` : '–',
      ]),
      2,
    ),
  );
  if (bigRecords) {
    console.log();
    console.log(`With ${bigRecords} records in ${bigZones} zones`);
    console.log(
      markdownTable(
        ['server', 'start → serving s', 'RSS MB once serving', `RSS MB after ${RSS_LOAD_S} s of queries`, 'largest process', 'processes', 'PSS MB, all processes (after)', `q/s during those ${RSS_LOAD_S} s`],
        results.filter((r) => r.big).map((r) => [r.server, fmt(r.big!.startS, 2), fmt(r.big!.serving.rssMb), fmt(r.big!.afterLoad.rssMb), r.big!.afterLoad.process, String(r.big!.afterLoad.processes), fmt(r.big!.afterLoad.pssMb), fmt(r.big!.load.qps)]),
        1,
      ),
    );
  }
  for (const r of results) if (r.differ?.count) console.log(`${r.server}: ${r.differ.count} answers differ from hostplane's, e.g. ${r.differ.examples.join('; ')}`);
  console.log();
  console.log(`load average: before ${loadAverage(load0)}, after ${loadAverage()} (${os.cpus().length} cores)`);
  if (process.env.BENCH_JSON) {
    const table = body.map(([measure, h, p, n, hp_p, hp_n]) => ({ measure, hostplane: h, PowerDNS: p, NSD: n, 'hostplane/PowerDNS': hp_p, 'hostplane/NSD': hp_n }));
    console.log(JSON.stringify({ loadBefore: load0, loadAfter: os.loadavg(), records: bigRecords, zones: bigZones, table, results }, null, 1));
  }
}
