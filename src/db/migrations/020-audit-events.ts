// The audit trail (API guide "Audit events"; docs/decisions/0029-audit-trail.md): one row per
// recorded request, written by the API as it answers.
// - No foreign keys: the trail outlives the customers, contacts and tokens it names, and a delete
//   elsewhere must neither wait for it nor take it along.
// - `expires_at` (created_at + the retention in force when the event was recorded) is what the
//   purge job deletes by, so the job needs no settings.
// - `audit_events_customer` serves the scoped lists (newest first, one customer or a reseller's
//   few); `audit_events_expires` the purge.
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('audit_events'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'integer')
    .addColumn('contact_id', 'integer')
    .addColumn('token_id', 'integer')
    .addColumn('client_ip', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('queue_job_id', 'integer')
    .addColumn('idempotency_key', 'text')
    .execute();
  await db.schema.createIndex('audit_events_customer').on('audit_events').columns(['customer_id', 'id']).execute();
  await db.schema.createIndex('audit_events_expires').on('audit_events').column('expires_at').execute();
}
