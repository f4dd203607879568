// Row locks that serialise check-then-write rules across resources (plan limits per package).
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Serialises writers in one package until the transaction ends: a no-op update takes the package
 * row's lock on PostgreSQL and the write lock on SQLite. Plan-limit counts (`max_databases`,
 * `max_email_addresses`) are only sound under it: parallel creates never pass the limit.
 * `await lockPackage(trx, packageId)`.
 */
export async function lockPackage(db: Kysely<Database>, id: number): Promise<void> {
  await db
    .updateTable('packages')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', id)
    .execute();
}
