// Idempotency keys (API guide "Safe retries"; docs/decisions/0026-safe-retries.md): the first answer
// to a write sent with an `Idempotency-Key`, kept in the store so every instance, and one started
// later, answers a repeat with it.
// - `scope`: whose key it is, `token:<api_tokens.id>` (or `customer:<id>` for the reseller's legacy
//   password); keys of different scopes never meet.
// - `fingerprint`: of the request the key was first sent with (method, path, body).
// - `claim`: a random token of the request that holds the key; its answer is stored only while it
//   still does (a request taken for abandoned cannot overwrite the one that took over).
// - `status`, `headers` (JSON), `body`: the answer, null while the first request runs.
// - `expires_at`: after it the key is free again and the worker's purge deletes the row.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('claim', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('headers', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();
}
