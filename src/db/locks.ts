// Row locks that serialise check-then-write rules across resources (plan limits per package).
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from './schema.js';
import { isPostgres } from './dialect.js';
import { findOr404 } from './ids.js';

/**
 * Serialises writers in one package until the transaction ends: a no-op update takes the package
 * row's lock on PostgreSQL and the write lock on SQLite. Plan-limit counts (`max_databases`,
 * `max_email_addresses`) are only sound under it: parallel creates never pass the limit.
 */
async function lockPackage(db: Kysely<Database>, id: number): Promise<void> {
  await db
    .updateTable('packages')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', id)
    .execute();
}

/**
 * lockPackage and a read of package `id` in one round trip where the engine allows it; runs
 * `query` (a select from `packages`, joins allowed) restricted to that package:
 * - PostgreSQL: `select … where packages.id = $1 for no key update of packages`. That is the lock
 *   mode the no-op update takes: writers of the package wait for each other,
 *   foreign-key checks of inserts that reference the package do not. Counts that the lock guards
 *   belong in a later statement: one that waited for the lock still reads with the snapshot it
 *   began with.
 * - SQLite: lockPackage first (the write lock), then the read.
 * A package the query does not find is not locked (nothing is written then).
 * `const rows = await lockedPackageRows(trx, id, trx.selectFrom('packages').innerJoin(…).select(…))`.
 */
export async function lockedPackageRows<DB extends Database, TB extends keyof DB, O>(
  db: Kysely<Database>,
  id: number,
  query: SelectQueryBuilder<DB, TB, O>,
): Promise<O[]> {
  const one = query.where('packages.id' as never, '=', id as never);
  if (isPostgres(db)) return one.forNoKeyUpdate('packages' as never).execute();
  await lockPackage(db, id);
  return one.execute();
}

/**
 * What a conditional write checks its object against inside its transaction (API guide "Safe
 * retries"): throws (412) when the request's condition does not hold for the object as it is now.
 * `checked` is set once it ran, so the route can tell a service that never called it.
 */
export interface Precondition<R> {
  (current: R): void;
  checked: boolean;
}

/** The tables whose rows conditional writes lock by lockForCheck. */
type CheckedTable = 'customers' | 'domains' | 'databases' | 'ssh_keys' | 'webhooks';

/**
 * For a conditional write only: locks the object's row until the transaction ends, so no other
 * writer changes it between the precondition's check and this write (`select … for no key update`
 * on PostgreSQL; a SQLite transaction holds the write lock from its `begin immediate`, src/db/index.ts).
 * Without a precondition it does nothing: a write without conditions costs what it did.
 * `await lockForCheck(trx, precondition, 'databases', 'id', 7)`.
 */
export async function lockForCheck(
  db: Kysely<Database>,
  precondition: Precondition<never> | undefined,
  table: CheckedTable,
  column: 'id' | 'name',
  value: number | string,
): Promise<void> {
  if (!precondition || !isPostgres(db)) return;
  await sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} = ${value} for no key update`.execute(db);
}

/**
 * The object a conditional write changes, by the numeric id of its URL: 404 when `find` (in the
 * caller's scope) has no such object, else its row locked for the check (lockForCheck) and
 * checked by `precondition`, if any: `const row = await findChecked(trx, p, 'databases', 'database', id, (n) => repo.findVisible(actor, n))`.
 */
export async function findChecked<R>(
  db: Kysely<Database>,
  precondition: Precondition<R> | undefined,
  table: CheckedTable,
  what: string,
  id: string,
  find: (id: number) => Promise<R | undefined>,
): Promise<R> {
  const row = await findOr404(what, id, async (n) => {
    await lockForCheck(db, precondition, table, 'id', n);
    return find(n);
  });
  precondition?.(row);
  return row;
}
