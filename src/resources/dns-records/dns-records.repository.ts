// All SQL of DNS records (API guide "DNS records"): scoped reads for the API, and the writes of the
// API, the job handlers and the base-record templates. A record is visible when its domain's owner
// is in the caller's scope (src/db/scope.ts).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, DnsRecordsTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { acmeRecordsOnly, withinTokenDomains } from '../../auth/token-scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';

export type DnsRecordRow = Selectable<DnsRecordsTable>;

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface DnsRecordFilters {
  domains?: string[];
  packageIds?: number[];
  recordTypes?: string[];
}

export interface NewDnsRecord {
  domain: string;
  name: string;
  record_type: string;
  data: string;
  ttl: number;
  tag: DnsRecordRow['tag'];
  state: DnsRecordRow['state'];
}

export class DnsRecordsRepository {
  /**
   * Pass a transaction for writes that belong together (record + job,
   * docs/decisions/0004-provisioning-seams.md).
   */
  constructor(readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db
      .selectFrom('dns_records')
      .innerJoin('domains', 'domains.name', 'dns_records.domain')
      .selectAll('dns_records')
      .where(visibleTo(actor, 'domains.customer_id'))
      .$call(withinTokenDomains(actor, 'dns_records.domain'))
      .$call(acmeRecordsOnly(actor, 'dns_records'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('dns_records.id', '=', id).executeTakeFirst();
  }

  /** Zone order: domain, owner name, type, then creation. */
  list(actor: Actor, f: DnsRecordFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.domains) q = q.where('dns_records.domain', 'in', f.domains);
    if (f.packageIds) q = q.where('domains.package_id', 'in', f.packageIds);
    if (f.recordTypes) q = q.where('dns_records.record_type', 'in', f.recordTypes);
    return fetchPage(
      q.orderBy('dns_records.domain').orderBy('dns_records.name').orderBy('dns_records.record_type').orderBy('dns_records.id'),
      page,
    );
  }

  /** A domain of the caller's scope by its ACE name (presence or not: the service tells them apart). */
  findDomain(actor: Actor, name: string) {
    return this.db
      .selectFrom('domains')
      .select(['name', 'customer_id', 'has_presence'])
      .where('name', '=', name)
      .where(visibleTo(actor, 'domains.customer_id'))
      .$call(withinTokenDomains(actor, 'domains.name'))
      .executeTakeFirst();
  }

  /** The nearest of `names` (parents of a name, nearest first) that is a domain of the caller's scope. */
  async findParentDomain(actor: Actor, names: string[]) {
    if (!names.length) return undefined;
    const rows = await this.db
      .selectFrom('domains')
      .select('name')
      .where('name', 'in', names)
      .where(visibleTo(actor, 'domains.customer_id'))
      .$call(withinTokenDomains(actor, 'domains.name'))
      .execute();
    return names.find((n) => rows.some((r) => r.name === n));
  }

  /**
   * Serialises writers of one zone until the transaction ends: a no-op update takes the domain
   * row's lock on PostgreSQL and the write lock on SQLite. Check-then-insert rules (identical
   * record, CNAME exclusivity) are only sound under it. Lock order everywhere: domain, then records.
   */
  async lockDomain(domain: string) {
    await this.db
      .updateTable('domains')
      .set((eb) => ({ dns_serial: eb.ref('dns_serial') }))
      .where('name', '=', domain)
      .execute();
  }

  /** Every record at one owner name of a zone, whatever its state. */
  recordsAt(domain: string, name: string) {
    return this.db
      .selectFrom('dns_records')
      .select(['id', 'record_type', 'data', 'state', 'tag'])
      .where('domain', '=', domain)
      .where('name', '=', name)
      .execute();
  }

  /**
   * Every record of a zone, whatever its state, at `name`, at its ancestors and — with `below`,
   * for an NS candidate, the one rule that looks there — strictly below it: what the delegation
   * rules look at. At the apex only its own records (no NS is ever there). Without `below` the
   * read is a few index lookups; a suffix match reads the whole zone.
   */
  recordsAround(domain: string, name: string, below: boolean) {
    const labels = name === '' ? [] : name.split('.');
    const ancestors = labels.slice(1).map((_, i) => labels.slice(i + 1).join('.'));
    // `_` is a LIKE wildcard and common in names: escape it (SQLite has no default escape).
    const under = `%.${name.replace(/[!%_]/g, '!$&')}`;
    let q = this.db.selectFrom('dns_records').select(['id', 'name', 'record_type', 'data', 'state', 'tag']).where('domain', '=', domain);
    if (name === '' || !below) q = q.where('name', 'in', [name, ...ancestors]);
    else q = q.where((eb) => eb.or([eb('name', 'in', [name, ...ancestors]), sql<boolean>`${eb.ref('name')} like ${under} escape '!'`]));
    return q.orderBy('id').execute();
  }

  /** Every record of a zone, whatever its state. */
  recordsOf(domain: string) {
    return this.db.selectFrom('dns_records').selectAll().where('domain', '=', domain).orderBy('id').execute();
  }

  byId(id: number) {
    return this.db.selectFrom('dns_records').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insert(r: NewDnsRecord): Promise<number> {
    const at = nowIso();
    const { id } = await this.db
      .insertInto('dns_records')
      .values({ ...r, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }

  /** Moves a record from one state to another; false when it was not in `from` (or is gone). */
  async transition(id: number, from: DnsRecordRow['state'], to: DnsRecordRow['state']) {
    const r = await this.db
      .updateTable('dns_records')
      .set({ state: to, updated_at: nowIso() })
      .where('id', '=', id)
      .where('state', '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: number, onlyState?: DnsRecordRow['state']) {
    let q = this.db.deleteFrom('dns_records').where('id', '=', id);
    if (onlyState) q = q.where('state', '=', onlyState);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The base records a subdomain owns (A/AAAA of its web server, the plan's MX). */
  ofSubdomain(subdomainId: number) {
    return this.db.selectFrom('dns_records').select(['id', 'name', 'record_type', 'data']).where('subdomain_id', '=', subdomainId).execute();
  }

  /** A base record of a subdomain, served at once (the subdomain's job waits for the DNS change). */
  async insertSubdomainBase(v: { domain: string; name: string; record_type: string; data: string; ttl: number; subdomain_id: number }): Promise<void> {
    const now = nowIso();
    await this.db.insertInto('dns_records').values({ ...v, tag: 'base', state: 'active', created_at: now, updated_at: now }).execute();
  }

  async deleteIds(ids: number[]): Promise<void> {
    if (ids.length) await this.db.deleteFrom('dns_records').where('id', 'in', ids).execute();
  }

  /** Deletes the zone's records of one tag, except a subdomain's own base records (they go with the subdomain). */
  async deleteTagged(domain: string, tag: DnsRecordRow['tag']) {
    const r = await this.db.deleteFrom('dns_records').where('domain', '=', domain).where('tag', '=', tag).where('subdomain_id', 'is', null).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** The zone's active base records of one name and type (not a subdomain's own). */
  baseRecordsAt(domain: string, name: string, recordType: string) {
    return this.db
      .selectFrom('dns_records')
      .select(['id', 'data'])
      .where('domain', '=', domain)
      .where('name', '=', name)
      .where('record_type', '=', recordType)
      .where('tag', '=', 'base')
      .where('state', '=', 'active')
      .where('subdomain_id', 'is', null)
      .orderBy('id')
      .execute();
  }

  async setData(id: number, data: string): Promise<void> {
    await this.db.updateTable('dns_records').set({ data, updated_at: nowIso() }).where('id', '=', id).execute();
  }

  /** The customer owning `domain` (the owner of its jobs). */
  async domainOwner(domain: string): Promise<number> {
    const d = await this.db.selectFrom('domains').select('customer_id').where('name', '=', domain).executeTakeFirstOrThrow();
    return d.customer_id;
  }
}
