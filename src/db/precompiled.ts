// Hot queries whose shape never changes, compiled once and run beside Kysely (docs/decisions/
// 0012-request-path.md). Building and compiling a Kysely query costs more than running a small
// indexed query, and Kysely's execution path (connection mutex, driver, result plumbing) costs about
// as much again on SQLite; on PostgreSQL the server parses and plans an unnamed statement anew each
// time. The per-request reads (token check, scoped reads of the hot endpoints) pay all that once.
import crypto from 'node:crypto';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

/** A compiled query as a direct reader runs it: its SQL, its parameter values, a stable statement name. */
export interface DirectQuery {
  sql: string;
  /** `hp_<sha1 of sql>`: PostgreSQL prepares the statement once per connection under this name ('' for none). */
  name: string;
  /** A bulk read (readArrays): rows as arrays of the selected columns in order, never kept. */
  arrays?: boolean;
  /** Its answers are never kept (SQLite keeps others until the database changes): values that never repeat. */
  once?: boolean;
}

/**
 * Runs a read of the store beside Kysely, or answers null when it cannot right now (SQLite while a
 * transaction is open on its one connection: Kysely's mutex must order the read after it).
 */
export type DirectReader = (q: DirectQuery, values: readonly unknown[]) => Promise<unknown[]> | unknown[] | null;

/**
 * The name a PostgreSQL statement is prepared under: `hp_<sha1 of its text>`, the same for a text
 * wherever it is run (precompiled reads and src/db/index.ts withNamedStatements), so a connection
 * prepares each text once.
 */
export const statementName = (sql: string) => `hp_${crypto.createHash('sha1').update(sql).digest('hex')}`;

// Keyed by the store's own Kysely instance: a transaction is another instance, so reads inside a
// transaction always take Kysely's path, on the transaction's connection.
const directReaders = new WeakMap<Kysely<any>, DirectReader>();

/** Lets precompiled reads of `db` (the store's root instance, never a transaction) run through `reader`; src/db/index.ts. */
export function registerDirectReader(db: Kysely<any>, reader: DirectReader): void {
  directReaders.set(db, reader);
}

/**
 * Compiles `build` once with placeholder arguments and afterwards only swaps in the real values:
 * `const byHash = precompiled(db, (h: string) => db.selectFrom('api_tokens').select(['id']).where('token_hash', '=', h))`
 * then `await byHash.first('ab12…')`. Every argument must reach the query as a parameter, unchanged.
 * Name the selected columns (no `*`): PostgreSQL refuses a prepared statement whose result columns
 * changed under it (a migration adding a column to the table). `{ once: true }` for a read whose
 * values never repeat (a new key's lookup): keeping its answers would only push out others'.
 */
export function precompiled<A extends unknown[], O>(db: Kysely<any>, build: (...args: A) => Compilable<O>, o: { once?: boolean } = {}) {
  let compiled: Compiled | null = null;
  const compile = (arity: number) => {
    const c = compileOnce(build as (...args: unknown[]) => Compilable<O>, arity);
    if (o.once) c.query.once = true;
    return c;
  };
  return {
    async all(...args: A): Promise<O[]> {
      compiled ??= compile(args.length);
      const { query } = compiled;
      const values = valuesOf(compiled, args);
      const direct = directReaders.get(db)?.(query, values);
      if (direct) return (await direct) as O[];
      return (await db.executeQuery<O>(CompiledQuery.raw(query.sql, values))).rows;
    },
    async first(...args: A): Promise<O | undefined> {
      return (await this.all(...args))[0];
    },
    /** The rows as arrays, never kept, as readArrays reads them. */
    arrays(...args: A): Promise<unknown[][]> {
      compiled ??= compile(args.length);
      return arraysOf(db, compiled.query, valuesOf(compiled, args));
    },
  };
}

interface Compiled {
  query: DirectQuery;
  parameters: readonly unknown[];
  /** For each parameter, the argument it takes (-1: a constant of the query). */
  slots: number[];
}

/** `build` compiled with placeholder arguments, and where each argument goes among the parameters. */
function compileOnce(build: (...args: unknown[]) => Compilable<unknown>, arity: number): Compiled {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000precompiled-argument-${i}`);
  const q = build(...placeholders).compile();
  const slots = q.parameters.map((p) => placeholders.indexOf(p as string));
  for (let i = 0; i < arity; i++) {
    if (!slots.includes(i)) throw new Error(`precompiled: argument ${i} does not reach the query as a parameter`);
  }
  return { query: { sql: q.sql, name: statementName(q.sql) }, parameters: q.parameters, slots };
}

/** The parameter values of one run: each argument where its placeholder was, the query's constants as they are. */
const valuesOf = ({ parameters, slots }: Compiled, args: readonly unknown[]) => parameters.map((p, i) => (slots[i] >= 0 ? args[slots[i]] : p));

/**
 * A statement compiled once like `precompiled` reads, for a connection of its own (Store.session),
 * where Kysely does not run: `const lock = sessionStatement((k: string) => db.selectFrom(…))` then
 * `await session.query(lock('k1'))` — its name, text and this run's values.
 */
export function sessionStatement<A extends unknown[]>(build: (...args: A) => Compilable<unknown>) {
  let compiled: Compiled | null = null;
  return (...args: A) => {
    compiled ??= compileOnce(build as (...args: unknown[]) => Compilable<unknown>, args.length);
    return { name: compiled.query.name, text: compiled.query.sql, values: valuesOf(compiled, args) };
  };
}

/**
 * Runs a read of `db` with each row as an array of its columns in select order, beside Kysely
 * where it can (as precompiled reads do) and never kept: for reads of many rows, where an object
 * per row costs more than the query (a DNS server loading its zones):
 * `const rows = await readArrays(db, db.selectFrom('dns_records').select(['name', 'data']))`.
 */
export function readArrays(db: Kysely<any>, query: Compilable<unknown>): Promise<unknown[][]> {
  const q = query.compile();
  // Not named: the texts of ad-hoc reads vary (lists of values), and PostgreSQL would keep each.
  return arraysOf(db, { sql: q.sql, name: '' }, q.parameters);
}

async function arraysOf(db: Kysely<any>, q: DirectQuery, values: readonly unknown[]): Promise<unknown[][]> {
  const direct = directReaders.get(db)?.({ ...q, arrays: true }, values);
  if (direct) return (await direct) as unknown[][];
  // Kysely's rows in select order (the columns are named, none a number).
  return (await db.executeQuery(CompiledQuery.raw(q.sql, [...values]))).rows.map((r) => Object.values(r as object));
}
