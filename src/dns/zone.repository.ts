// All SQL of the DNS server (docs/decisions/0003-dns-propagation.md): the served
// zones, the change log it tails, and its row in dns_servers (liveness + what it has applied).
import type { Kysely } from 'kysely';
import type { Database, DnssecPhase } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { precompiled, readArrays } from '../db/precompiled.js';
import type { StoredRecord } from './rdata.js';

/** What a zone is built from: the presence domain's serial and its served records. */
export interface ZoneRows {
  domain: string;
  serial: number;
  records: StoredRecord[];
  /** DNSSEC as the domain chose (migration 022): true, false, or null (the setting decides). */
  dnssec: boolean | null;
  /** Where its DNSSEC lifecycle is (migration 023): `disabling` keeps the zone signed. */
  dnssecPhase: DnssecPhase | null;
}

/** One entry of the change log as a DNS server applies it. */
export interface ZoneChange {
  id: number;
  domain: string;
  /** Relative owner names the change touched; null: the whole zone. */
  owners: string[] | null;
  serial: number | null;
}

/** The owners column read back; anything but a non-empty list of strings is the whole zone. */
function ownersOf(text: string | null): string[] | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string') ? v : null;
  } catch {
    return null;
  }
}

/**
 * A zone from its rows as `served` reads them (arrays, without the domain on each: a server's start
 * reads every record of the store, and an object per row costs more than the query).
 */
function zoneRows(domain: string, rows: unknown[][]): ZoneRows | undefined {
  if (!rows.length) return undefined;
  const records: StoredRecord[] = [];
  for (const [, id, name, type, data, ttl] of rows as [unknown, unknown, string | null, string | null, string | null, unknown, unknown][]) {
    if (type !== null) records.push({ name: name ?? '', record_type: type, data: data ?? '', ttl: Number(ttl), id: Number(id) });
  }
  const dnssec = rows[0][6];
  const phase = rows[0][7];
  return {
    domain, serial: Number(rows[0][0]), records, dnssec: dnssec === null || dnssec === undefined ? null : Number(dnssec) === 1,
    dnssecPhase: phase === 'disabling' || phase === 'rolling' ? phase : null,
  };
}

export class ZoneRepository {
  /** A whole zone's read, compiled once: a server's start runs it for every zone. */
  private readonly wholeZone;

  constructor(private readonly db: Kysely<Database>) {
    this.wholeZone = precompiled(db, (domain: string) => this.served(domain));
  }

  /** The newest change id (0 for none); read before loading zones, so later changes are replayed. */
  async lastChangeId(): Promise<number> {
    const row = await this.db.selectFrom('dns_changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /**
   * Changes after `afterId`, oldest first, with the owners each touched (null: the whole zone) and
   * the serial it made: `await repo.changesAfter(41, 1000)`.
   */
  async changesAfter(afterId: number, limit: number): Promise<ZoneChange[]> {
    const rows = await this.db.selectFrom('dns_changes').select(['id', 'domain', 'owners', 'serial']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ id: Number(r.id), domain: r.domain, owners: ownersOf(r.owners), serial: r.serial === null ? null : Number(r.serial) }));
  }

  /**
   * Presence domains after `after` in name order, at most `limit`, for loading zones page by
   * page (a store with a million records is never held as rows all at once):
   * `for (let after = ''; ; ) { const names = await repo.presenceDomains(after, 500); … }`.
   */
  async presenceDomains(after: string, limit: number): Promise<string[]> {
    const rows = await this.db.selectFrom('domains').select('name').where('has_presence', '=', 1).where('name', '>', after).orderBy('name').limit(limit).execute();
    return rows.map((r) => r.name);
  }

  /**
   * A presence domain with its serial and served records (state active or deleting), in one
   * statement (one snapshot); undefined when the domain has no presence.
   */
  async zone(domain: string): Promise<ZoneRows | undefined> {
    return zoneRows(domain, await this.wholeZone.arrays(domain));
  }

  /**
   * The served records of some owners of one presence domain (relative names, '' the apex) and the
   * zone's serial, in one statement (one snapshot); undefined when the domain has no presence.
   */
  async ownerRecords(domain: string, owners: string[]): Promise<ZoneRows | undefined> {
    return zoneRows(domain, await readArrays(this.db, this.served(domain, owners)));
  }

  /**
   * The read of a presence domain's serial and served records, of every owner or of `owners`
   * only; its rows (zoneRows) are [serial, id, name, record_type, data, ttl, dnssec, dnssec_phase], one with nulls for
   * a zone without records, none for a domain without presence.
   */
  private served(domain: string, owners?: string[]) {
    return this.db
      .selectFrom('domains as d')
      .leftJoin('dns_records as r', (j) => {
        const on = j.onRef('r.domain', '=', 'd.name').on('r.state', 'in', ['active', 'deleting']);
        return owners ? on.on('r.name', 'in', owners) : on;
      })
      .select(['d.dns_serial as serial', 'r.id', 'r.name', 'r.record_type', 'r.data', 'r.ttl', 'd.dnssec', 'd.dnssec_phase'])
      .where('d.has_presence', '=', 1)
      .where('d.name', '=', domain)
      // In the order of the index on (domain, name, record_type), whose entries follow the record
      // id within one RRset (the rowid on SQLite): no sort, and an RRset lists its records in the
      // order they were created; a zone is then built owner by owner (Zone.build).
      .orderBy('r.name')
      .orderBy('r.record_type')
      .orderBy('r.id');
  }

  /** Registers or refreshes this server's row: `await repo.heartbeat(id, applied, startedAt)`. */
  async heartbeat(id: string, appliedChangeId: number, startedAt: string): Promise<void> {
    const now = nowIso();
    await this.db
      .insertInto('dns_servers')
      .values({ id, applied_change_id: appliedChangeId, heartbeat_at: now, started_at: startedAt })
      .onConflict((oc) => oc.column('id').doUpdateSet({ applied_change_id: appliedChangeId, heartbeat_at: now }))
      .execute();
  }

  /**
   * Deletes change-log entries older than `olderThanMs` that every registered DNS server has
   * applied (a new server loads whole zones and starts at the newest id, so it never needs them).
   * With no server registered nothing is deleted.
   */
  async purgeChanges(olderThanMs: number): Promise<number> {
    const r = await this.db
      .deleteFrom('dns_changes')
      .where('id', '<=', (eb) => eb.selectFrom('dns_servers').select((s) => s.fn.min('applied_change_id').as('low')))
      .where('created_at', '<', nowIso(-olderThanMs))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes the rows of servers gone for longer than `olderThanMs` (killed without a clean stop). */
  async purgeGone(olderThanMs: number): Promise<void> {
    await this.db.deleteFrom('dns_servers').where('heartbeat_at', '<', nowIso(-olderThanMs)).execute();
  }

  async unregister(id: string): Promise<void> {
    await this.db.deleteFrom('dns_servers').where('id', '=', id).execute();
  }
}
