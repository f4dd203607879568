// All SQL of DKIM keys (API guide "Sending mail"; docs/decisions/0021-dkim-signing.md): a domain's
// keys and their managed `<selector>._domainkey` records, the keys a mail server signs with, and
// what the operator is told about domains that send unsigned.
import type { Kysely, Selectable } from 'kysely';
import type { Database, DkimKeysTable } from '../../db/schema.js';
import { nowIso } from '../../db/time.js';

export type DkimKeyRow = Selectable<DkimKeysTable>;

/** A key a mail server signs with, for mail From: `addressDomain` (a zone or a name below it). */
export interface SigningKey {
  addressDomain: string;
  zone: string;
  selector: string;
  privateKey: string;
}

/** A domain with addresses that sends unsigned, and why. */
export interface UnsignedDomain {
  domain: string;
  reason: 'no-key' | 'record-missing';
}

export class DkimKeysRepository {
  constructor(readonly db: Kysely<Database>) {}

  async insert(k: Pick<DkimKeyRow, 'domain' | 'selector' | 'private_key' | 'record_id' | 'state'>): Promise<number> {
    const { id } = await this.db
      .insertInto('dkim_keys')
      .values({ ...k, retire_at: null, created_at: nowIso() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }

  async hasPresence(domain: string): Promise<boolean> {
    const d = await this.db.selectFrom('domains').select('has_presence').where('name', '=', domain).executeTakeFirst();
    return Boolean(d?.has_presence);
  }

  /** A domain's keys, oldest first. */
  keysOf(domain: string): Promise<DkimKeyRow[]> {
    return this.db.selectFrom('dkim_keys').selectAll().where('domain', '=', domain).orderBy('id').execute();
  }

  byId(id: number): Promise<DkimKeyRow | undefined> {
    return this.db.selectFrom('dkim_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The new key signs; the others that did become `retiring` until `retireAt`. */
  async switchTo(key: DkimKeyRow, retireAt: string): Promise<void> {
    await this.db.updateTable('dkim_keys').set({ state: 'retiring', retire_at: retireAt }).where('domain', '=', key.domain).where('state', '=', 'signing').execute();
    await this.db.updateTable('dkim_keys').set({ state: 'signing' }).where('id', '=', key.id).execute();
  }

  async remove(id: number): Promise<void> {
    await this.db.deleteFrom('dkim_keys').where('id', '=', id).execute();
  }

  /**
   * The keys `server` signs with: for each domain of its addresses, the signing key of the address's
   * zone whose record is published (active, with the key's data). A key whose record is missing or
   * changed is left out: that domain sends unsigned rather than with a key no DNS server serves.
   */
  async signingKeysOn(server: string): Promise<SigningKey[]> {
    const rows = await this.db
      .selectFrom('email_addresses as e')
      .innerJoin('dkim_keys as k', (j) => j.onRef('k.domain', '=', 'e.zone').on('k.state', '=', 'signing'))
      .innerJoin('dns_records as r', (j) => j.onRef('r.id', '=', 'k.record_id').on('r.state', '=', 'active').on('r.tag', '=', 'managed'))
      .select(['e.domain as addressDomain', 'e.zone', 'k.selector', 'k.private_key as privateKey', 'r.name as recordName'])
      .distinct()
      .where('e.mail_server_name', '=', server)
      .where('e.state', '!=', 'deleting')
      .orderBy('e.domain')
      .execute();
    return rows.filter((r) => r.recordName === `${r.selector}._domainkey`).map(({ recordName: _, ...k }) => k);
  }

  /** The mail servers with addresses of `zone` (those whose key table lists its key). */
  async serversOf(zone: string): Promise<string[]> {
    const rows = await this.db.selectFrom('email_addresses').select('mail_server_name').distinct().where('zone', '=', zone).where('state', '!=', 'deleting').execute();
    return rows.map((r) => r.mail_server_name);
  }

  /** Whether `server` has an address at `domain` other than `except` (its DKIM tables list the domain already). */
  async domainOnServer(server: string, domain: string, except: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('email_addresses')
      .select('id')
      .where('mail_server_name', '=', server)
      .where('domain', '=', domain)
      .where('id', '!=', except)
      .where('state', '!=', 'deleting')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Domains with addresses whose mail leaves unsigned: no signing key, or its record is not published. */
  async unsignedDomains(): Promise<UnsignedDomain[]> {
    const rows = await this.db
      .selectFrom('email_addresses as e')
      .leftJoin('dkim_keys as k', (j) => j.onRef('k.domain', '=', 'e.zone').on('k.state', '=', 'signing'))
      .leftJoin('dns_records as r', (j) => j.onRef('r.id', '=', 'k.record_id').on('r.state', '=', 'active'))
      .select(['e.zone as domain', 'k.id as keyId', 'r.id as recordId'])
      .distinct()
      .where('e.state', '!=', 'deleting')
      .orderBy('e.zone')
      .execute();
    return rows.flatMap((r): UnsignedDomain[] => (r.keyId === null ? [{ domain: r.domain, reason: 'no-key' }] : r.recordId === null ? [{ domain: r.domain, reason: 'record-missing' }] : []));
  }
}
