// DNSSEC key lifecycle (API guide "DNSSEC (extension)"; docs/decisions/0032-dnssec.md).
// - `domains.dnssec_phase`: null while the zone is steady (signed or not), `disabling` while it stays
//   signed with the delete form of CDS/CDNSKEY until the parent's DS is gone, `rolling` while a
//   second key is on its way in. `dnssec_phase_at`: when the current step of the phase began.
//   `dnssec_parent_at`: when the parent was seen (or the operator confirmed, `ds-seen`) to hold what
//   the CDS of the current step asks; null while that is awaited. `dnssec_ds_ttl`: the TTL of the
//   domain's DS at the parent as last seen (null: not asked; DNS_DNSSEC_DS_TTL_S is assumed).
// - `dnssec_keys.role`: `incoming` (published and signing, not yet named by CDS), `active` (named by
//   CDS: the key the parent's DS should name), `outgoing` (still published and signing until the
//   parent's DS names its successor and that DS's TTL has passed); `role_at`: since when.
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('domains').addColumn('dnssec_phase', 'text').execute();
  await db.schema.alterTable('domains').addColumn('dnssec_phase_at', 'text').execute();
  await db.schema.alterTable('domains').addColumn('dnssec_parent_at', 'text').execute();
  await db.schema.alterTable('domains').addColumn('dnssec_ds_ttl', 'integer').execute();
  await db.schema.alterTable('dnssec_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('active')).execute();
  await db.schema.alterTable('dnssec_keys').addColumn('role_at', 'text').execute();
}
