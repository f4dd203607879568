// DNSSEC (API guide "DNSSEC (extension)"; docs/decisions/0032-dnssec.md).
// - `domains.dnssec`: 1 signed, 0 unsigned, null as the setting DNS_DNSSEC says.
// - `dnssec_keys`: a domain's signing keys. `generation` 1 is the first key (a rollover adds the
//   next); the unique index lets the DNS servers that find a signed zone without a key race to make
//   it, one winning. `private_key` is the PKCS#8 PEM sealed by security/secret-box.ts: never shown,
//   logged or put in a job. `public_key` (base64 of the DNSKEY's key field) and `key_tag` are what
//   the API shows without opening the seal.
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema.alterTable('domains').addColumn('dnssec', 'integer').execute();
  await withIdColumn(engine, db.schema.createTable('dnssec_keys'))
    .addColumn('domain', 'text', (c) => c.notNull().references('domains.name').onDelete('cascade'))
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('algorithm', 'integer', (c) => c.notNull())
    .addColumn('flags', 'integer', (c) => c.notNull())
    .addColumn('key_tag', 'integer', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dnssec_keys_generation').unique().on('dnssec_keys').columns(['domain', 'generation']).execute();
}
