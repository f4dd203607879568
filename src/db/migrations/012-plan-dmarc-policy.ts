// The DMARC policy a plan publishes for its presence domains (API guide "DNS records";
// docs/decisions/0022-mail-records-and-discovery.md): `plans.dmarc_policy`, the `p=` of the `_dmarc`
// base record, one of none, quarantine, reject. Existing plans get quarantine, the default of new ones.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('plans')
    .addColumn('dmarc_policy', 'text', (c) => c.notNull().defaultTo('quarantine').check(sql`dmarc_policy in ('none', 'quarantine', 'reject')`))
    .execute();
}
