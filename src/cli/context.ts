// What every CLI command shares: settings, the store, the operator service, output and the one
// place that turns failures into a message and an exit code.
//
// Exit codes: 0 done; 1 the command failed (user error such as an unknown id, or the database
// cannot be reached); 2 the settings are invalid (every problem is listed). With `--json`, the
// failure is one JSON line on stderr, {"error":{"code":…,"message":…}}.
import { InvalidArgumentError } from 'commander';
import { ConfigError, isDefaultDatabase, loadConfig, type Config } from '../config.js';
import { AppError, AppErrors } from '../errors.js';
import { openStore, type Store } from '../db/index.js';
import { buildAdmin, type Admin } from '../admin/index.js';
import { serviceDeps } from '../resources/service-deps.js';

/** A failure the user can act on; printed as one line without a stack trace. `code` names it in JSON. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 'failed',
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Somewhere to print: `process.stdout` in the binary, a buffer when a test runs the CLI in-process. */
export interface Writer {
  write(text: string): unknown;
}

/** What one run of the CLI reads and writes; see `main()` in src/main.ts. */
export interface CliIo {
  /** Read only by options such as `--password-stdin`. */
  stdin: AsyncIterable<string | Uint8Array>;
  stdout: Writer;
  stderr: Writer;
  /**
   * The settings (docs/operator-guide.md "Settings") are read from here, never from `process.env`
   * directly.
   */
  env: Record<string, string | undefined>;
}

/** The binary's own streams and environment. */
export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** How commands print their result. */
export interface Output {
  /** Text for people, as given. */
  text(text: string): void;
  /** Compact JSON on one line, as the API writes it; scripts parse it with jq or JSON.parse. */
  json(value: unknown): void;
  /** A plain table for people: one header row, columns padded to their widest cell. */
  table(rows: Record<string, unknown>[], columns: string[]): void;
}

export function output(w: Writer): Output {
  return {
    text: (text) => void w.write(text),
    json: (value) => void w.write(`${JSON.stringify(value)}\n`),
    table: (rows, columns) => void w.write(formatTable(rows, columns)),
  };
}

function formatTable(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)\n';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  return `${[line(columns), ...cells.map(line)].join('\n')}\n`;
}

export interface CommandContext {
  config: Config;
  store: Store;
  admin: Admin;
  out: Output;
}

/**
 * The store DATABASE_URL names. Only the embedded default's directory (`./data`) is created, so
 * `npm start` works in a fresh checkout; any other path must be in an existing directory. A
 * long-running process (serve, worker, dns) checkpoints SQLite's WAL on a thread of its own.
 */
export const openConfiguredStore = (config: Config, o: { longRunning?: boolean } = {}): Promise<Store> =>
  openStore(config.databaseUrl, { createDirectory: isDefaultDatabase(config), checkpointThread: o.longRunning });

/** Runs `fn` with an open store (settings from `io.env`) and always closes the store. */
export async function withStore<T>(io: CliIo, fn: (ctx: CommandContext) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openConfiguredStore(config);
  try {
    return await fn({ config, store, admin: buildAdmin(serviceDeps(store, config)), out: output(io.stdout) });
  } finally {
    await store.close();
  }
}

/** How `reportError` prints: one line per problem for people, or one JSON line for scripts. */
export interface ErrorReport {
  write: (s: string) => void;
  env: Record<string, string | undefined>;
  json: boolean;
}

/** What a script reads from a failed `--json` command (stderr): `{"error":{"code":…,"message":…}}`. */
export function jsonError(code: string, message: string, details?: string[]): string {
  return `${JSON.stringify({ error: details ? { code, message, details } : { code, message } })}\n`;
}

/** Prints `err` (stderr) and returns the exit code. */
export function reportError(err: unknown, { write, env, json }: ErrorReport): number {
  const f = classify(err);
  if (json) write(jsonError(f.code, f.message, f.details));
  else for (const line of f.lines ?? [f.message]) write(`hostplane: ${line}\n`);
  // The stack of an unexpected error only when asked for: it helps developers and scares operators.
  if (f.unexpected && (env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace')) write(`${(err as Error)?.stack ?? ''}\n`);
  return f.exitCode;
}

interface Failure {
  code: string;
  message: string;
  /** Every problem, when there are several. */
  details?: string[];
  /** What people read, one `hostplane: …` line each; [message] unless given. */
  lines?: string[];
  exitCode: number;
  unexpected?: boolean;
}

function classify(err: unknown): Failure {
  if (err instanceof ConfigError) {
    return { code: 'invalid_settings', message: 'invalid settings', details: err.problems, lines: [err.message], exitCode: 2 };
  }
  if (err instanceof CliError) return { code: err.code, message: err.message, exitCode: err.exitCode };
  // The API's error ids (resource_not_found, invalid_api_data, conflict, …).
  if (err instanceof AppError) return { code: err.code, message: err.message, exitCode: 1 };
  if (err instanceof AppErrors) {
    const details = err.errors.map((e) => e.message);
    return { code: err.errors[0]?.code ?? 'invalid_api_data', message: details.join(' '), details, lines: details, exitCode: 1 };
  }
  // Unexpected (a database that cannot be reached, a bug): still one line.
  const message = describe(err);
  // A database nobody has migrated yet: say what to do instead of only what is missing.
  const hint = /no such table|relation "[^"]+" does not exist/i.test(message) ? ' (is the database migrated? run `hostplane migrate`)' : '';
  return { code: 'failed', message: `${message}${hint}`, exitCode: 1, unexpected: true };
}

function describe(err: unknown): string {
  // pg reports a refused connection to several addresses as an AggregateError with no message.
  if (err instanceof AggregateError && !err.message) return err.errors.map(describe).join('; ');
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** commander argument parser for ids: `--customer 12`. */
export function parseId(value: string): number {
  if (!/^[1-9][0-9]{0,14}$/.test(value)) throw new InvalidArgumentError('must be a positive whole number.');
  return Number(value);
}

/** commander argument parser for limits: `--max-databases 0`. */
export function parseCount(value: string): number {
  if (!/^[0-9]{1,9}$/.test(value)) throw new InvalidArgumentError('must be a whole number ≥ 0.');
  return Number(value);
}

/** commander argument parser for lists: `--php-versions 8.3,8.4`. */
export function parseList(value: string): string[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!items.length) throw new InvalidArgumentError('must name at least one value (comma-separated).');
  return items;
}

/** Longest secret `readSecret` accepts: a password, not a file. */
const SECRET_MAX_BYTES = 4096;

/**
 * A secret given on stdin (`--password-stdin`), so it stays out of the shell history and `ps`:
 * `printf '%s\n' "$PW" | hostplane … --password-stdin`. One line; its line break is not part of it.
 */
export async function readSecret(io: CliIo, option: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    size += b.length;
    if (size > SECRET_MAX_BYTES) throw new CliError(`${option}: stdin holds more than ${SECRET_MAX_BYTES} bytes; give the secret alone, on one line.`, 'invalid_input');
    chunks.push(b);
  }
  const secret = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (!secret) throw new CliError(`${option}: stdin is empty; pipe the secret in, e.g. printf '%s\\n' "$PASSWORD" | hostplane …`, 'invalid_input');
  if (/[\r\n]/.test(secret)) throw new CliError(`${option}: stdin holds more than one line; give the secret alone, on one line.`, 'invalid_input');
  return secret;
}
