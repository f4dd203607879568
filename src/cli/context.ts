// What every CLI command shares: settings, the store, the operator service, output and the one
// place that turns failures into a message and an exit code (issue 2 items 1 and 6).
//
// Exit codes: 0 done; 1 the command failed (user error such as an unknown id, or the database
// cannot be reached); 2 the settings are invalid (every problem is listed).
import { InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { AppError, AppErrors } from '../errors.js';
import { openStore, type Store } from '../db/index.js';
import { AdminRepository } from '../admin/admin.repository.js';
import { AdminService } from '../admin/admin.service.js';

/** A failure the user can act on; printed as one line without a stack trace. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface CommandContext {
  config: Config;
  store: Store;
  admin: AdminService;
}

/** Runs `fn` with an open store (settings from the environment) and always closes the store. */
export async function withStore<T>(fn: (ctx: CommandContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl);
  try {
    return await fn({ config, store, admin: new AdminService(new AdminRepository(store.db), config) });
  } finally {
    await store.close();
  }
}

/** Prints `err` for a person (stderr) and returns the exit code. */
export function reportError(err: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (err instanceof ConfigError) {
    write(`hostplane: ${err.message}\n`);
    return 2;
  }
  if (err instanceof CliError) {
    write(`hostplane: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof AppError) {
    write(`hostplane: ${err.message}\n`);
    return 1;
  }
  if (err instanceof AppErrors) {
    for (const e of err.errors) write(`hostplane: ${e.message}\n`);
    return 1;
  }
  // Unexpected (a database that cannot be reached, a bug): still one line; the stack only when
  // asked for, since it helps developers and scares operators.
  const message = describe(err);
  // A database nobody has migrated yet: say what to do instead of only what is missing.
  const hint = /no such table|relation "[^"]+" does not exist/i.test(message) ? ' (is the database migrated? run `hostplane migrate`)' : '';
  write(`hostplane: ${message}${hint}\n`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') {
    write(`${(err as Error)?.stack ?? ''}\n`);
  }
  return 1;
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

/** Compact JSON on one line, as the API writes it; scripts parse it with jq or JSON.parse. */
export function printJson(value: unknown) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** A plain table for people: one header row, columns padded to their widest cell. */
export function printTable(rows: Record<string, unknown>[], columns: string[]) {
  if (!rows.length) {
    process.stdout.write('(none)\n');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  process.stdout.write(`${[line(columns), ...cells.map(line)].join('\n')}\n`);
}
