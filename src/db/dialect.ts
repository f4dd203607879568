// Every difference between SQLite and PostgreSQL lives in this file.
import { CompiledQuery, PostgresAdapter, PostgresDialect, sql, type Kysely, type ColumnDefinitionBuilder, type CreateTableBuilder, type RawBuilder } from 'kysely';

export type Engine = 'sqlite' | 'postgres';

/** Adds an auto-increment integer primary key `id` in the engine's own way. */
export function withIdColumn<T extends string>(engine: Engine, t: CreateTableBuilder<T, never>) {
  return engine === 'postgres'
    ? t.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : t.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** Makes the next generated id of `table` at least `next` (customer numbers start at 10001). */
export async function startIdsAt(engine: Engine, db: Kysely<any>, table: string, next: number) {
  if (engine === 'postgres') {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${next - 1}, true)`.execute(db);
  } else {
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${next - 1})`.execute(db);
  }
}

/** True when `e` is a unique-constraint violation on either engine. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True when `db` (a store or a transaction) talks to PostgreSQL: its placeholders are `$1`, SQLite's `?`. */
export function isPostgres(db: Kysely<any>): boolean {
  return sql`${0}`.compile(db).sql === '$1';
}

/**
 * The PostgreSQL schema `db` works in (`?schema=` deployments and tests share one database), or
 * null on SQLite. Notifications carry it so deployments sharing a database ignore each other.
 */
export async function currentSchema(db: Kysely<any>): Promise<string | null> {
  if (!isPostgres(db)) return null;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? null;
}

/**
 * PostgreSQL: `NOTIFY channel` with the current schema (and ` <tag>`, when given) as payload; inside a transaction it is
 * delivered when (and only if) the transaction commits. SQLite has no such thing: a no-op.
 * `await notifySchema(trx, 'hostplane_dns')`.
 */
export async function notifySchema(db: Kysely<any>, channel: string, tag?: string): Promise<void> {
  if (!isPostgres(db)) return;
  // `schema tag`: schema names never contain a space.
  if (tag === undefined) await sql`select pg_notify(${channel}, current_schema())`.execute(db);
  else await sql`select pg_notify(${channel}, current_schema() || ' ' || ${tag}::text)`.execute(db);
}

/**
 * Serialises the transactions that call it with the same `name` until each commits (a
 * transaction-scoped advisory lock per schema on PostgreSQL). SQLite has one writer at a time,
 * which gives the same order by itself. `await serializeTransactions(trx, 'hostplane_dns')`.
 */
export async function serializeTransactions(trx: Kysely<any>, name: string): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(hashtext(${`${name}:`}::text || current_schema()::text))`.execute(trx);
}

/** A column of jsonRowsInsert: its name and its type (PostgreSQL casts the JSON text to it). */
export type JsonRowsColumn = readonly [name: string, type: 'text' | 'integer'];

/**
 * An INSERT of any number of rows with one statement text: the rows go as one parameter, a JSON
 * array of arrays (values in `columns` order), so the statement caches (SQLite's prepared
 * statements, PostgreSQL's named ones, src/db/index.ts) hold one text whatever the batch size
 * (SQLite binds up to BOUND_ROWS rows as values instead, one text per row count).
 * On PostgreSQL, `unflushed` lets the statement's own transaction commit without waiting for its
 * WAL to reach the disk (synchronous_commit off for it alone; the next synchronous commit of anyone,
 * or the WAL writer within ~0.6 s, flushes it); SQLite in WAL mode with synchronous=NORMAL never
 * waits for the disk at commit. Built on a transaction, it commits as the transaction does.
 * `const insert = jsonRowsInsert(db, 'audit_events', [['path', 'text'], ['status', 'integer']]); await db.executeQuery(insert([['/x', 202]]))`.
 */
export function jsonRowsInsert(
  db: Kysely<any>,
  table: string,
  columns: readonly JsonRowsColumn[],
  o: { unflushed?: boolean; onConflict?: RawBuilder<unknown>; returning?: readonly string[] } = {},
) {
  const pg = isPostgres(db);
  const names = sql.join(columns.map(([name]) => sql.id(name)));
  const values = sql.join(columns.map(([, type], i) => jsonField(pg, i, type)));
  // `where true`: SQLite would otherwise read ON CONFLICT as part of the select's join.
  const conflict = o.onConflict ? sql` where true on conflict ${o.onConflict}` : sql``;
  const returned = o.returning?.length ? sql` returning ${sql.join(o.returning.map((c) => sql.id(c)))}` : sql``;
  const text = sql`insert into ${sql.table(table)} (${names}) select ${values} from ${jsonRows(pg)}${conflict}${returned}${unflushedReturning(db, o, o.returning?.length ? ',' : '')}`.compile(db).sql;
  const asJson = (data: unknown[][]) => CompiledQuery.raw(text, [JSON.stringify(data)]) as CompiledQuery<Record<string, unknown>>;
  if (pg) return asJson;
  // SQLite: up to BOUND_ROWS rows as bound values (a text per row count), which spares it parsing
  // the JSON again for every column (a third of a row's cost with an answer of 1 KB).
  const bound = new Map<number, string>();
  const row = sql`(${sql.join(columns.map(() => sql`?`))})`;
  const tail = o.onConflict ? sql` on conflict ${o.onConflict}` : sql``;
  return (data: unknown[][]) => {
    if (data.length > BOUND_ROWS) return asJson(data);
    let t = bound.get(data.length);
    if (t === undefined) bound.set(data.length, (t = sql`insert into ${sql.table(table)} (${names}) values ${sql.join(data.map(() => row))}${tail}${returned}`.compile(db).sql));
    return CompiledQuery.raw(t, data.flat()) as CompiledQuery<Record<string, unknown>>;
  };
}

/**
 * Rows a jsonRowsInsert binds as values on SQLite; more go as JSON. 64: a batch of the audit trail
 * or of the answers under load (8 busy connections: 45–50 rows) stays bound, 5 µs a stored answer
 * less than as JSON; its two tables' texts (one per row count, 128) fit the statement cache (500).
 */
export const BOUND_ROWS = 64;

/** The rows of a jsonRows statement: its one parameter, a JSON array of arrays, as `e`. */
const jsonRows = (pg: boolean) => (pg ? sql`jsonb_array_elements(${'[]'}::jsonb) as e(value)` : sql`json_each(${'[]'}) as e`);
/** Field `i` of a jsonRows row, as `type`. */
const jsonField = (pg: boolean, i: number, type: JsonRowsColumn[1]) =>
  pg ? sql`(e.value ->> ${sql.lit(i)})::${sql.raw(type)}` : sql`json_extract(e.value, ${sql.lit(`$[${i}]`)})`;
// Inside a transaction it would relax the whole transaction's commit: there, never.
const unflushedReturning = (db: Kysely<any>, o: { unflushed?: boolean }, joiner: ',' | '' = '') =>
  isPostgres(db) && o.unflushed && !db.isTransaction
    ? sql.raw(`${joiner ? ', ' : ' returning '}set_config('synchronous_commit', 'off', true)`)
    : sql``;

/** A round trip to the database (the readiness probe). */
export async function ping(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}

// Session locks (PostgreSQL): held by one connection until it closes, so a dead worker can be told
// from a busy one (decision 0005). They are re-entrant per session: the holder must be a real
// session, never a transaction-mode pooler's shared backend, where a probe could find it "free".

/** The statement a dedicated connection runs to take session lock $1 (a peer's probe holds it for a moment: wait for that). */
export const TAKE_SESSION_LOCK_SQL = 'select pg_advisory_lock(hashtextextended($1::text, 0))';

/**
 * PostgreSQL: the names among `names` whose session lock nobody holds (their connections are
 * gone). Probed with transaction-level try-locks, which conflict with a session lock on the same
 * key and which the server releases when the statement's own transaction ends: a probe never
 * keeps a lock, even if it is cancelled half-way. Call it on a store, not inside a transaction
 * (there the probed locks would last until that transaction ends).
 * `const gone = await freeSessionLocks(db, ['hostplane worker a', 'hostplane worker b'])`.
 */
export async function freeSessionLocks(db: Kysely<any>, names: string[]): Promise<string[]> {
  if (!names.length) return [];
  const { rows } = await sql<{ name: string }>`
    select name from unnest(${names}::text[]) as name where pg_try_advisory_xact_lock(hashtextextended(name, 0))`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * A column for a write's RETURNING that, on PostgreSQL, lets the statement's own transaction commit
 * without waiting for its WAL to reach the disk (synchronous_commit off for it alone); the next
 * synchronous commit of anyone, or the WAL writer within ~0.6 s, flushes it. SQLite (WAL,
 * synchronous=NORMAL) never waits at commit: a constant there. Only for a statement run alone.
 * `db.updateTable('t').set(…).returning(commitUnflushed(db).as('unflushed'))`.
 */
export const commitUnflushed = (db: Kysely<any>) => (isPostgres(db) ? sql<string>`set_config('synchronous_commit', 'off', true)` : sql<string>`''`);

/**
 * PostgreSQL with a migration lock per schema. Kysely's own adapter takes one advisory lock for the
 * whole database, so deployments in schemas of their own (`?schema=`, and every test file) would
 * wait for each other's migrations.
 */
export class SchemaPostgresDialect extends PostgresDialect {
  override createAdapter() {
    return new SchemaMigrationLockAdapter();
  }
}

/** The advisory lock a schema's migrations take (SQL, in the schema of the connection). */
export const MIGRATION_LOCK_KEY = "hashtextextended('hostplane migrations:' || coalesce(current_schema(), ''), 0)";
const migrationLockKey = sql.raw(MIGRATION_LOCK_KEY);

class SchemaMigrationLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_lock(${migrationLockKey})`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_unlock(${migrationLockKey})`.execute(db);
  }
}
