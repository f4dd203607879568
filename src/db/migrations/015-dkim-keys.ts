// DKIM keys with selectors (API guide "Sending mail"; docs/decisions/0021-dkim-signing.md): a
// domain's keys, each with the managed TXT record `<selector>._domainkey` that publishes its public
// half. `state`: `publishing` (the record is on its way to the DNS servers; nothing signs with it),
// `signing` (the mail server of the domain's package signs with it), `retiring` (replaced; its
// record stays until `retire_at`, the record's TTL after the switch). The key of migration 003
// (domains.dkim_private_key, selector `default`) becomes the domain's signing key.
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('dkim_keys'))
    .addColumn('domain', 'text', (c) => c.notNull().references('domains.name'))
    .addColumn('selector', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('record_id', 'integer')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('retire_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dkim_keys_selector').unique().on('dkim_keys').columns(['domain', 'selector']).execute();

  const old = await db
    .selectFrom('domains as d')
    .leftJoin('dns_records as r', (j) => j.onRef('r.domain', '=', 'd.name').on('r.name', '=', 'default._domainkey').on('r.tag', '=', 'managed'))
    .select(['d.name', 'd.dkim_private_key', 'd.created_at', 'r.id as record_id'])
    .where('d.dkim_private_key', 'is not', null)
    .execute();
  for (const d of old) {
    await db
      .insertInto('dkim_keys')
      .values({ domain: d.name, selector: 'default', private_key: d.dkim_private_key, record_id: d.record_id, state: 'signing', retire_at: null, created_at: d.created_at })
      .execute();
  }
  await db.schema.alterTable('domains').dropColumn('dkim_private_key').execute();
}
