// Runs the `hostplane` command for tests: in this process through `main()` from src/main.ts (no
// process start, no TypeScript loader: milliseconds a step), or as a child process for the
// long-running commands (`serve`, `worker`, `dns`) that a test signals. Also the new, empty
// databases the commands get as DATABASE_URL.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { EnvSchema } from '../../src/config.js';
import type { Store } from '../../src/db/index.js';
import { buildApp } from '../../src/app.js';
import { MemoryLimiter } from '../../src/limits/limiter.js';
import { main } from '../../src/main.js';
import { freshStore, processUrl, testConfig, type EngineName } from './app.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `hostplane <args>` run to its end in this process, with exactly `env` as its settings (none of
 * the test process's), `stdin` as its standard input (empty unless given) and its output
 * captured: `await runCli(['migrate', '--json'], { DATABASE_URL })`,
 * `await runCli([…, '--password-stdin'], env, { stdin: 'secret\n' })`.
 */
export async function runCli(args: string[], env: Record<string, string>, opts: { stdin?: string } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdin: Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]),
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { ...env },
  });
  return { code, stdout, stderr };
}

/** `node --import tsx src/main.ts <args>` as a child; none of the test process's settings leak in. */
export function spawnCli(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(EnvSchema.properties)) delete clean[key];
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: ROOT, env: { ...clean, ...env } });
}

/** A child's exit code and everything it wrote, once it has exited. */
export function exited(child: ChildProcessWithoutNullStreams): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export interface TestDb {
  /** What the command gets as DATABASE_URL. */
  url: string;
  store: Store;
  drop(): Promise<void>;
}

/**
 * A new, empty (not migrated) database of `engine`: a SQLite file, or a new PostgreSQL schema named
 * by `DATABASE_URL=…?schema=<name>` in TEST_DATABASE_URL's database.
 */
export async function newDatabase(engine: EngineName): Promise<TestDb> {
  const db = await freshStore(engine, { migrated: false, poolSize: 2 });
  return { ...db, url: processUrl(db) };
}

/** An app serving `store` with links under `baseUrl`, to check what the CLI did the way a client sees it. */
export async function apiOn(store: Store, baseUrl: string) {
  const config = testConfig({ PUBLIC_BASE_URL: baseUrl });
  const limiter = new MemoryLimiter(config);
  const app = await buildApp(config, { store, limiter });
  await app.ready();
  return { app, close: async () => { await app.close(); await limiter.close(); } };
}

export { freePort } from './ports.js';
