// What the benches share for output: number formatting, percentiles, the Markdown table, a log sink.
import os from 'node:os';
import { Writable } from 'node:stream';

/** `fmt(12.345, 1)` → `'12.3'`; NaN or infinity → `'–'`. */
export const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** A Markdown table; the first `leftCols` columns are left-aligned, the rest right-aligned. */
export function markdownTable(head: string[], body: string[][], leftCols: number): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const left = (i: number) => i < leftCols;
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, i) => (left(i) ? ':' + '-'.repeat(w + 1) : '-'.repeat(w + 1) + ':')).join('|') + '|';
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** Discards log lines: the cost of producing them is measured, not the cost of a terminal. */
export const discard = () => new Writable({ write: (_chunk, _enc, done) => done() });

/** Nearest-rank percentile of `xs` (any order); NaN for none: `pct(samples, 99)`. */
export function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** The mean of `xs`; NaN for none. */
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The machine a bench ran on, first in its output: `hostplane DNS bench — <time> — node …, 2 × <cpu>`. */
export function benchHeader(name: string): string {
  const cpus = os.cpus();
  return `hostplane ${name} bench — ${new Date().toISOString()} — node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim()}`;
}

/** `1.50 2.00 2.50`: the load averages now, or figures taken earlier with os.loadavg(). */
export const loadAverage = (l = os.loadavg()) => l.map((x) => x.toFixed(2)).join(' ');

/**
 * Runs a bench's main: an interruption (Ctrl-C, after the bench's own cleanup) exits 130 with one
 * line, any other failure 1 with its error.
 */
export function runBench(main: () => Promise<void>, interrupted: () => boolean): void {
  main().catch((err) => {
    if (interrupted() && (err as Error).message === 'interrupted') console.error('interrupted');
    else console.error(err);
    process.exitCode = interrupted() ? 130 : 1;
  });
}

/** What every bench reads from its environment the same way: the app's log level and the PostgreSQL URL (none: SQLite only). */
export const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
export const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
/** The request headers of the benches' API calls: API v1 answers, JSON:API bodies. */
export const ACCEPT = 'application/vnd.hostplane.v1+json';
export const JSONAPI = 'application/vnd.api+json';

/**
 * Polls a job (GET `jobUrl` with `headers`) every `pollMs` until it is done and answers its
 * finished_at (wall-clock ms, 1 ms resolution); throws when it failed or took longer than
 * `limitMs`. `check` runs between polls (a bench's interrupt check):
 * `await jobFinishedAt(url, { authorization: `token ${t}`, accept: ACCEPT }, { limitMs: 30_000, pollMs: 20 })`.
 */
export async function jobFinishedAt(
  jobUrl: string,
  headers: Record<string, string>,
  o: { limitMs: number; pollMs: number; check?: () => void },
): Promise<number> {
  for (const end = Date.now() + o.limitMs; ; await sleep(o.pollMs)) {
    const r = await fetch(jobUrl, { headers });
    const a = ((await r.json()) as { data?: { attributes: { status: string; finished_at: string | null; error: string | null } } }).data?.attributes;
    if (a?.status === 'done' && a.finished_at) return Date.parse(a.finished_at);
    if (a?.status === 'failed') throw new Error(`job ${jobUrl} failed: ${a.error}`);
    if (Date.now() > end) throw new Error(`job ${jobUrl} not done within ${o.limitMs} ms (last: ${a?.status} ${a?.error ?? ''})`);
    o.check?.();
  }
}
