// The settings of the mail bench (bench/email.bench.ts says what each does) and what its parts share.
import { BenchStacks } from '../stacks.js';

export const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const CREATES = num('BENCH_MAIL_CREATES', 50);
export const WARMUP = num('BENCH_MAIL_WARMUP', 3);
export const POLL_MS = num('BENCH_MAIL_POLL_MS', 5);
export const SMALL = num('BENCH_MAIL_SMALL', 100);
export const DIRECTORY = num('BENCH_MAIL_DIRECTORY', 100_000);
export const CLIENTS = (process.env.BENCH_MAIL_CLIENTS ?? '8,16').split(',').map(Number).filter((n) => n > 0);
export const SECONDS = num('BENCH_MAIL_SECONDS', 5);
export const SAMPLE = num('BENCH_MAIL_SAMPLE', 50);
export const CHEAP = num('BENCH_MAIL_CHEAP', 1) > 0;
/** Timed passdb queries from this process at each size (after a tenth as many untimed). */
export const LOOKUPS = 1000;
/** How often the client polls a job once the login works (its `done` time is read from finished_at). */
export const JOB_POLL_MS = 20;
export const LOGIN_LIMIT_MS = 30_000;
/** The presence domain of the API's mailboxes (part 1). */
export const DOMAIN = 'bench-mail.example';
/** The directory rows of part 2 go into this many domains: the SMALL ones under .bench-dir.example, the bulk under .bench-bulk.example. */
export const DIR_DOMAINS = 100;
export const QUOTA_BYTES = 1024 * 1024 * 1024;
/** INSERT batch of the bulk rows (5 parameters each: under SQLite's 32,766). */
export const BATCH = 2000;

export type EngineName = 'sqlite' | 'postgres';

/** The stacks of this run, and Ctrl-C (bench/stacks.ts). */
export const stacks = new BenchStacks();
export const checkInterrupted = () => stacks.check();
