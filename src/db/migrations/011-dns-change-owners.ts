// Incremental zones (docs/decisions/0014-dns-zones-in-wire-form.md):
// dns_changes.owners names the owners a change touched (relative names as dns_records.name
// stores them, '' for the apex, as a JSON array), so a DNS server reloads only those; null means
// the whole zone (a new domain, a plan's base records reset, entries written before this).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('dns_changes').addColumn('owners', 'text').execute();
}
