// The settings of the web server bench (bench/subdomains.bench.ts says what each does) and what its
// parts share.
import { performance } from 'node:perf_hooks';
import { BenchStacks } from '../stacks.js';

export const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const SITES = (process.env.BENCH_WEB_SITES ?? '10,1000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
export const CHANGES = num('BENCH_WEB_CHANGES', 50);
export const WARMUP = num('BENCH_WEB_WARMUP', 3);
export const BURST = num('BENCH_WEB_BURST', 50);
export const POLL_MS = num('BENCH_WEB_POLL_MS', 3);
export const BULK_PARALLEL = num('BENCH_WEB_BULK_PARALLEL', 8);
export const COMPONENT_N = num('BENCH_WEB_COMPONENT_N', 20);
/** Which parts run: `changes` (A/B, C and the push's parts), `serving` (req/s and p99 against nginx). */
export const PARTS = (process.env.BENCH_WEB_PARTS ?? 'changes,serving').split(',').map((p) => p.trim());
/** How often the client polls a job once its host answers (its `done` time is read from finished_at). */
export const JOB_POLL_MS = 20;
export const ANSWER_LIMIT_MS = 60_000;
/** Bringing the existing sites up fails when no further site goes live for this long. */
export const BULK_STALL_MS = 120_000;
/** The name up.sh registers the stack's web server under. */
export const WEB = 'local';
export const DOMAIN = 'bench-sites.example';
/** Target of the subdomains bench, at 1,000 sites (docs/performance.md). */
export const TARGET_P50_MS = 500;
export const TARGET_AT_SITES = 1000;


export type EngineName = 'sqlite' | 'postgres';

/** Wall-clock ms with sub-ms resolution (Caddy's log stamps and finished_at are wall clock). */
export const wallNow = () => performance.timeOrigin + performance.now();

/** The stacks of this run, and Ctrl-C (bench/stacks.ts). */
export const stacks = new BenchStacks();
export const checkInterrupted = () => stacks.check();
