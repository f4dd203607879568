// The SQL of the DNS change log as job runs use it (docs/decisions/0003-dns-propagation.md):
// appending a change in the caller's transaction, reading one back, and how far the live DNS
// servers got. The DNS server's own reads of the log are in src/dns/zone.repository.ts.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { nowIso } from '../../db/time.js';

/** A change touching more owners than this is logged as a change of the whole zone. */
const MAX_OWNERS = 100;

export class ChangeLogRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Bumps the zone's SOA serial and appends to the change log with the new serial (secondaries are
   * asked for it: docs/decisions/0013-dns-secondaries.md); returns the change id.
   */
  async appendChange(domain: string, owners: string[] | null = null): Promise<number> {
    const bumped = await this.db
      .updateTable('domains')
      .set((eb) => ({ dns_serial: eb('dns_serial', '+', 1) }))
      .where('name', '=', domain)
      .returning('dns_serial')
      .executeTakeFirst();
    const { id } = await this.db
      .insertInto('dns_changes')
      .values({ domain, created_at: nowIso(), serial: bumped ? Number(bumped.dns_serial) : null, owners: owners && owners.length > 0 && owners.length <= MAX_OWNERS ? JSON.stringify([...new Set(owners)]) : null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }

  /** The id of `domain`'s newest change (0 for none). */
  async latestOf(domain: string): Promise<number> {
    const r = await this.db.selectFrom('dns_changes').select((eb) => eb.fn.max('id').as('id')).where('domain', '=', domain).executeTakeFirst();
    return Number(r?.id ?? 0);
  }

  /** The domain and serial of one change, or undefined once the log entry is purged. */
  change(id: number) {
    return this.db.selectFrom('dns_changes').select(['domain', 'serial', 'created_at']).where('id', '=', id).executeTakeFirst();
  }

  /** How many DNS servers reported since `since`, and the lowest change id they all applied. */
  async liveServers(since: string): Promise<{ live: number; lowestApplied: number }> {
    const row = await this.db
      .selectFrom('dns_servers')
      .select((eb) => [eb.fn.countAll<number>().as('live'), eb.fn.min('applied_change_id').as('low')])
      .where('heartbeat_at', '>', since)
      .executeTakeFirst();
    return { live: Number(row?.live ?? 0), lowestApplied: Number(row?.low ?? 0) };
  }
}
