// DNS records, the change log DNS servers tail, and DNS server liveness.
//
// How "a DNS job is done only when the change is answered" holds with several DNS processes
// (docs/decisions/0003-dns-propagation.md): every change to a zone's served records appends a row
// to dns_changes in the same transaction; each DNS process applies the log in order to its
// in-memory zones and records the last id it serves in dns_servers (with a heartbeat). A DNS job
// is done once every live DNS server has applied the job's change.
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('dns_records'))
    .addColumn('domain', 'text', (c) => c.notNull().references('domains.name').onDelete('cascade'))
    // Owner names relative to the domain, lower-case ACE; '' is the apex.
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('record_type', 'text', (c) => c.notNull())
    // Presentation (zone-file) form, normalised: what the API shows and the DNS server parses.
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('ttl', 'integer', (c) => c.notNull())
    // base (plan template), custom (API), managed (service, undeletable).
    .addColumn('tag', 'text', (c) => c.notNull())
    // pending: created, not served yet; active: served; deleting: served until its delete job runs.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dns_records_domain').on('dns_records').columns(['domain', 'name', 'record_type']).execute();

  await withIdColumn(engine, db.schema.createTable('dns_changes'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dns_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('applied_change_id', 'integer', (c) => c.notNull())
    .addColumn('heartbeat_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .execute();

  // The SOA serial of a presence domain's zone: grows with every change to it.
  await db.schema.alterTable('domains').addColumn('dns_serial', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  // The plan's base-record template (JSON); null means the operator default (settings).
  await db.schema.alterTable('plans').addColumn('dns_template', 'text').execute();
  // Worker liveness of a claimed job (heartbeats extend lease_until) and the handler's progress.
  await db.schema.alterTable('queue_jobs').addColumn('progress', 'text').execute();
}
