// Rules of DNS records (API guide "DNS records", "Queue jobs", "Compatibility with existing
// clients").
//
// Life of a record (docs/decisions/0003-dns-propagation.md): POST stores it `pending` and enqueues
// a create job in one transaction; the job makes it `active` (served) and is done once the DNS
// servers answer it. DELETE marks an active record `deleting` (still served) and enqueues a delete
// job that removes it; a record still `pending` is removed at once (it was never served), and its
// delete job only confirms that. Both answer 202 with the job.
//
// Operator actions on records (the customer menu, `hostplane admin`): the base records and the
// managed DKIM key of a new presence domain, and their reset when a package changes plan.
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { AppError, AppErrors, invalidField, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues } from '../../db/ids.js';
import { aceOf, notADomainName, parentDomains } from '../../domain-name.js';
import { withJobs } from '../../queue/enqueue.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import type { DnsDriver } from '../../provisioning/dns/driver.js';
import type { ServiceDeps } from '../service-deps.js';
import { DnsRecordsRepository, type DnsRecordRow } from './dns-records.repository.js';
import type { Precondition } from '../../db/locks.js';
import { checkFqdnLength, conflictInZone, normaliseRecord, RecordInvalid, type FieldProblem, type RecordInput, type NormalisedRecord } from './dns-records.rules.js';
import { checkTemplate, generateDkimKey, insertBaseRecords, insertDkimRecord, ownTemplate, planTemplate, type DkimKey, type TemplatePlan } from './dns-records.base-records.js';
import { DMARC_NAME, dmarcRecord, isDmarc, spfHosts, spfRecord } from './dns-records.mail-records.js';
import { MailServersRepository } from '../../provisioning/mail/servers.repository.js';
import type { DmarcPolicy } from '../../db/schema.js';
import type { DnsRecordJobPayload } from './dns-records.jobs.js';
import { checkRecordWrite } from '../../auth/token-scope.js';

const fieldError = (p: FieldProblem) => invalidField(p.field, p.detail);

/**
 * The settings records follow: the default TTL (DNS_DEFAULT_TTL, API guide "DNS records") and the
 * default base records (DNS_BASE_*).
 */
export type DnsRecordsSettings = Pick<Config, 'dnsDefaultTtl' | 'dnsBase'>;

/** What `admin package set-plan` did to one presence domain of the package. */
export interface BaseRecordReset {
  domain: string;
  /**
   * reset: base records replaced by the new plan's; locked: dns_update_lock is on, nothing changed
   * (API guide "DNS records").
   */
  base_records: 'reset' | 'locked';
  removed: number;
  inserted: number;
  /** Template records left out because a kept (custom or managed) record clashes with them. */
  skipped: number;
}

/** What `admin plan set-dmarc-policy` did to one presence domain of the plan. */
export interface DmarcUpdate {
  domain: string;
  /** updated: its base `_dmarc` record has the new policy; locked: dns_update_lock is on; absent: it has no base `_dmarc` record (deleted, or written before there were any). */
  dmarc_record: 'updated' | 'locked' | 'absent';
}

/** The base records of a plan and a new DKIM key, made before the transaction that writes them. */
export interface PreparedBaseRecords {
  template: NormalisedRecord[];
  dkim: DkimKey;
}

export class DnsRecordsService {
  private readonly store: Store;
  private readonly settings: DnsRecordsSettings;
  private readonly dns: DnsDriver;
  constructor(deps: ServiceDeps) {
    ({ store: this.store, config: this.settings, dns: this.dns } = deps);
  }

  private get repo() {
    return new DnsRecordsRepository(this.store.db);
  }

  /** Filters: `domain` names the exact domain (Unicode or ACE, any case; subdomains match nothing). */
  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<DnsRecordRow>> {
    const domains = filters.domain?.map(aceOf).filter((d): d is string => d !== null);
    const packageIds = idValues(filters.package_id);
    const recordTypes = filters.record_type?.map((t) => t.toUpperCase());
    if (domains?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { domains, packageIds, recordTypes }, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('dns-record', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * The presence domain a record (or a subdomain, API guide "Subdomains": `member` 'subdomain') is
   * created in. Unknown or foreign → 404 (no existence leaks); a domain without presence, a
   * subdomain of one of the caller's domains or a name that cannot be a domain → 422 on `domain`.
   */
  async presenceZone(actor: Actor, input: string, name: string, member = 'name') {
    const ace = aceOf(input);
    const row = ace === null ? undefined : await this.repo.findDomain(actor, ace);
    if (row) {
      if (!row.has_presence) {
        throw invalidField('domain', `${row.name} is not used in a package (no presence); DNS records need a presence domain.`);
      }
      return row;
    }
    const parent = await this.repo.findParentDomain(actor, parentDomains(input));
    if (parent) {
      const labels = input.toLowerCase().replace(/\.$/, '').split('.');
      const sub = labels.slice(0, labels.length - parent.split('.').length).join('.');
      // The record's own name stays in front: name "_x" in domain "www.shop.example" is "_x.www".
      const full = name === '' || name === '@' ? sub : `${name}.${sub}`;
      throw invalidField('domain', `domain takes the domain without subdomains: use domain "${parent}" and ${member} "${full}".`);
    }
    if (ace === null) throw invalidField('domain', notADomainName(input));
    throw notFound('domain');
  }

  /** Stores a pending record and its create job; returns the job (the 202's primary data). */
  async create(actor: Actor, input: RecordInput & { domain: string }): Promise<QueueJobRow> {
    const checked = normaliseRecord(input, this.settings.dnsDefaultTtl);
    if ('problems' in checked) throw new AppErrors(checked.problems.map(fieldError));
    const { record } = checked;
    checkRecordWrite(actor, record.record_type, record.name.ace);
    const zone = await this.presenceZone(actor, input.domain, input.name ?? '');
    try {
      checkFqdnLength(record.name.ace, zone.name);
    } catch (e) {
      if (e instanceof RecordInvalid) throw fieldError(e.problem);
      throw e;
    }
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(zone.name);
      const clash = conflictInZone(await repo.recordsAround(zone.name, record.name.ace, record.record_type === 'NS'), { ...record, name: record.name.ace });
      if (clash) throw invalidField(clash.field, clash.detail, 'conflict');
      const id = await repo.insert({
        domain: zone.name,
        name: record.name.ace,
        record_type: record.record_type,
        data: record.data,
        ttl: record.ttl,
        tag: 'custom',
        state: 'pending',
      });
      const payload: DnsRecordJobPayload = { domain: zone.name };
      return enqueue({ customerId: zone.customer_id, jobType: 'dns-record', action: 'create', objectId: String(id), payload });
    }, actor);
  }

  /**
   * Enqueues the deletion of a record; returns the job. Managed records (the DKIM key) cannot be
   * deleted (403, API guide "DNS records"); base records can. A record already being deleted
   * answers with its pending delete job, so a repeated DELETE is harmless. A `precondition` (API
   * guide "Safe retries") is checked on the record as it is under the zone's lock.
   */
  async delete(actor: Actor, id: string, precondition?: Precondition<DnsRecordRow>): Promise<QueueJobRow> {
    const found = await this.get(actor, id);
    if (found.tag === 'managed') {
      throw new AppError('record_not_deletable', 'This record is managed by the service (e.g. the DKIM key) and cannot be deleted.');
    }
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(found.domain);
      // Read again under the lock: a job or another DELETE may have changed it meanwhile.
      const row = await repo.byId(found.id);
      if (!row) throw notFound('dns-record');
      precondition?.(row);
      const key = { jobType: 'dns-record', action: 'delete', objectId: String(row.id) } as const;
      return enqueue.unlessStanding(row.state === 'deleting', key, async () => {
        // A pending record was never served: it goes at once, and its job only confirms that.
        if (row.state === 'pending') await repo.delete(row.id);
        else if (row.state === 'active') await repo.transition(row.id, 'active', 'deleting');
        const payload: DnsRecordJobPayload = { domain: row.domain };
        return enqueue({ ...key, customerId: await repo.domainOwner(row.domain), payload });
      });
    }, actor);
  }

  // ---- operator actions (hostplane admin) ------------------------------------------------------

  /** Checks a plan's DNS template by the rules of the API (422 naming the record at fault). */
  checkTemplate(template: unknown[], where = 'DNS template'): void {
    checkTemplate(template, this.settings.dnsDefaultTtl, where);
  }

  /** The template of `plan` and a fresh DKIM key, for addBaseRecords (key generation is slow: call it before the transaction). */
  async prepareBaseRecords(plan: TemplatePlan): Promise<PreparedBaseRecords> {
    const template = await this.planTemplate(this.store.db, plan);
    return { template, dkim: await generateDkimKey() };
  }

  /**
   * A new presence domain is served from the start: the plan's base records and the managed DKIM
   * key, written in the caller's transaction (the one that inserts the domain; API guide "DNS
   * records").
   */
  async addBaseRecords(trx: Kysely<Database>, domain: string, prepared: PreparedBaseRecords): Promise<void> {
    const records = new DnsRecordsRepository(trx);
    await insertBaseRecords(records, domain, prepared.template);
    await insertDkimRecord(records, domain, prepared.dkim, this.settings.dnsDefaultTtl);
    await this.dns.recordChange(trx, domain);
  }

  /**
   * The base records of `plan`, checked, for resetBaseRecords: its template with the mail records,
   * whose SPF names the registered mail servers as `db` (the caller's transaction) sees them.
   */
  async planTemplate(db: Kysely<Database>, plan: TemplatePlan): Promise<NormalisedRecord[]> {
    const { dnsBase: base, dnsDefaultTtl: defaultTtl } = this.settings;
    return planTemplate(plan, { base, defaultTtl, mail: { sendingHosts: await this.sendingHosts(db), autoconfigTarget: base.autoconfig } });
  }

  /** The SPF TXT of the base records (`v=spf1 mx a:… -all`), as `db` sees the mail servers: a subdomain's too. */
  async spf(db: Kysely<Database>): Promise<string> {
    return spfRecord(await this.sendingHosts(db));
  }

  private async sendingHosts(db: Kysely<Database>): Promise<string[]> {
    return spfHosts((await new MailServersRepository(db).list()).map((m) => m.smtp));
  }

  /** The apex MX records of `plan`'s template: a subdomain's mail goes there too (API guide "Subdomains"). */
  planMailExchangers(plan: Pick<TemplatePlan, 'id' | 'dns_template'>): NormalisedRecord[] {
    return ownTemplate(plan, this.settings.dnsBase, this.settings.dnsDefaultTtl).filter((r) => r.name.ace === '' && r.record_type === 'MX');
  }

  /**
   * Resets the base records of each zone to `template`, except where its dns_update_lock is on
   * (API guide "DNS records"). Custom and managed records stay; template records that clash with
   * them are left out. In the caller's transaction, with the zones already locked; one DNS change
   * per reset.
   */
  async resetBaseRecords(trx: Kysely<Database>, zones: { name: string; dns_update_lock: number }[], template: NormalisedRecord[]): Promise<BaseRecordReset[]> {
    const records = new DnsRecordsRepository(trx);
    const out: BaseRecordReset[] = [];
    for (const z of zones) {
      if (z.dns_update_lock) {
        out.push({ domain: z.name, base_records: 'locked', removed: 0, inserted: 0, skipped: 0 });
        continue;
      }
      const removed = await records.deleteTagged(z.name, 'base');
      const { inserted, skipped } = await insertBaseRecords(records, z.name, template);
      out.push({ domain: z.name, base_records: 'reset', removed, inserted, skipped });
    }
    for (const r of out) if (r.base_records === 'reset') await this.dns.recordChange(trx, r.domain);
    return out;
  }

  /**
   * Gives the base `_dmarc` record of each zone `policy`, except where its dns_update_lock is on
   * (API guide "DNS records"); a zone whose customer deleted that record keeps it deleted. In the
   * caller's transaction, with the zones locked; one DNS change per updated zone.
   */
  async setDmarcPolicy(trx: Kysely<Database>, zones: { name: string; dns_update_lock: number }[], policy: DmarcPolicy): Promise<DmarcUpdate[]> {
    const records = new DnsRecordsRepository(trx);
    const out: DmarcUpdate[] = [];
    for (const z of zones) {
      if (z.dns_update_lock) {
        out.push({ domain: z.name, dmarc_record: 'locked' });
        continue;
      }
      const dmarc = (await records.baseRecordsAt(z.name, DMARC_NAME, 'TXT')).filter((r) => isDmarc(r.data));
      for (const r of dmarc) await records.setData(r.id, dmarcRecord(policy, r.data));
      out.push({ domain: z.name, dmarc_record: dmarc.length ? 'updated' : 'absent' });
    }
    for (const r of out) if (r.dmarc_record === 'updated') await this.dns.recordChange(trx, r.domain, [DMARC_NAME]);
    return out;
  }
}
