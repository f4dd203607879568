// Secondaries of hostplane's DNS server (docs/decisions/0013-dns-secondaries.md):
// real name servers (NSD, Knot, BIND) that transfer every zone from hostplane by AXFR/IXFR over TCP,
// authenticated by TSIG (RFC 8945), and are sent a NOTIFY (RFC 1996) on every change.
//
// `address` is host:port of the secondary: NOTIFY and the SOA check of a DNS job go there, and its
// host is the only address a transfer with its key is accepted from (the ACL). `tsig_secret` is
// the base64 key shared with it: never shown (admin list/--json) nor logged.
//
// dns_changes.serial: the zone's SOA serial the change produced, so a job can ask every secondary
// whether it serves that serial yet (null for a change of a domain that has no row any more).
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('dns_secondaries'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('tsig_key_name', 'text', (c) => c.notNull())
    .addColumn('tsig_algorithm', 'text', (c) => c.notNull())
    .addColumn('tsig_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('dns_changes').addColumn('serial', 'integer').execute();
}
