// Rules of DNS records (spec §2.6, §3.1, §4.3.6; API-NOTES §1.4–1.5, §5, §6 dns-record).
//
// Life of a record (docs/decisions/0003-dns-propagation.md): POST stores it `pending` and enqueues
// a create job in one transaction; the job makes it `active` (served) and is done once the DNS
// servers answer it. DELETE marks an active record `deleting` (still served) and enqueues a delete
// job that removes it; a record still `pending` is removed at once (it was never served), and its
// delete job only confirms that. Both answer 202 with the job (API-NOTES §1.4–1.5).
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database } from '../../db/schema.js';
import { AppError, AppErrors, notFound } from '../../errors.js';
import type { Page, PageResult } from '../../db/paging.js';
import { idValues, parseNumericId } from '../../db/ids.js';
import { nowIso } from '../../db/time.js';
import { QueueJobsRepository, type QueueJobRow } from '../queue-jobs/queue-jobs.repository.js';
import { DONE_JOB_RETENTION_MS } from '../queue-jobs/queue-jobs.service.js';
import { aceOf } from '../domains/domains.service.js';
import { DnsRecordsRepository, type DnsRecordRow } from './dns-records.repository.js';
import { checkFqdnLength, conflictInZone, normaliseRecord, RecordInvalid, type FieldProblem, type RecordInput } from './dns-records.validate.js';

/** What a DNS-record job carries: the zone, so the handler locks and announces it even when the record is gone. */
export interface DnsRecordJobPayload {
  domain: string;
}

const EMPTY: PageResult<never> = { rows: [], total: 0 };

const pointer = (field: string) => `/data/attributes/${field}`;
const fieldError = (p: FieldProblem) => new AppError('invalid_api_data', p.detail, { pointer: pointer(p.field) });

export interface DnsRecordsOptions {
  /** TTL of records created without one (DNS_DEFAULT_TTL, spec §2.6). */
  defaultTtl: number;
  /** Wakes the workers after a job was committed (src/queue). */
  onEnqueued?: () => void;
}

export class DnsRecordsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: DnsRecordsOptions,
  ) {}

  private get repo() {
    return new DnsRecordsRepository(this.db);
  }

  /** Filters: `domain` names the exact domain (Unicode or ACE, any case; subdomains match nothing). */
  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<DnsRecordRow>> {
    const domains = filters.domain?.map(aceOf).filter((d): d is string => d !== null);
    const packageIds = idValues(filters.package_id);
    const recordTypes = filters.record_type?.map((t) => t.toUpperCase());
    if (domains?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY);
    return this.repo.list(actor, { domains, packageIds, recordTypes }, page);
  }

  async get(actor: Actor, id: string) {
    const n = parseNumericId(id);
    const row = n === null ? undefined : await this.repo.findVisible(actor, n);
    if (!row) throw notFound('dns-record');
    return row;
  }

  /**
   * The presence domain a record is created in. Unknown or foreign → 404 (no existence leaks);
   * a domain without presence, a subdomain of one of the caller's domains or a name that cannot
   * be a domain → 422 on `domain`.
   */
  private async zone(actor: Actor, input: string) {
    const ace = aceOf(input);
    const row = ace === null ? undefined : await this.repo.findDomain(actor, ace);
    if (row) {
      if (!row.has_presence) {
        throw new AppError('invalid_api_data', `${row.name} is not used in a package (no presence); DNS records need a presence domain (spec §2.6).`, {
          pointer: pointer('domain'),
        });
      }
      return row;
    }
    const labels = input.toLowerCase().replace(/\.$/, '').split('.');
    const parents = labels
      .slice(1, -1)
      .map((_, i) => aceOf(labels.slice(i + 1).join('.')))
      .filter((d): d is string => d !== null);
    const parent = await this.repo.findParentDomain(actor, parents);
    if (parent) {
      const sub = labels.slice(0, labels.length - parent.split('.').length).join('.');
      throw new AppError('invalid_api_data', `domain takes the domain without subdomains (spec §2.6): use domain "${parent}" and name "${sub}".`, {
        pointer: pointer('domain'),
      });
    }
    if (ace === null) throw new AppError('invalid_api_data', 'Not ACE-encodable.', { pointer: pointer('domain') });
    throw notFound('domain');
  }

  private async jobRow(actor: Actor, trx: Kysely<Database>, jobId: number): Promise<QueueJobRow> {
    const job = await new QueueJobsRepository(trx).findVisible(actor, jobId, nowIso(-DONE_JOB_RETENTION_MS));
    // The owner is the zone's customer, which is in the caller's scope: always found.
    if (!job) throw new Error(`queue job ${jobId} not readable after insert`);
    return job;
  }

  /** Stores a pending record and its create job; returns the job (the 202's primary data). */
  async create(actor: Actor, input: RecordInput & { domain: string }): Promise<QueueJobRow> {
    const checked = normaliseRecord(input, this.opts.defaultTtl);
    if ('problems' in checked) throw new AppErrors(checked.problems.map(fieldError));
    const { record } = checked;
    const zone = await this.zone(actor, input.domain);
    try {
      checkFqdnLength(record.name.ace, zone.name);
    } catch (e) {
      if (e instanceof RecordInvalid) throw fieldError(e.problem);
      throw e;
    }
    const job = await this.db.transaction().execute(async (trx) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(zone.name);
      const clash = conflictInZone(await repo.recordsAround(zone.name, record.name.ace), { ...record, name: record.name.ace });
      if (clash) throw new AppError('conflict', clash.detail, { pointer: pointer(clash.field) });
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
      const jobId = await new QueueJobsRepository(trx).insert({
        customerId: zone.customer_id,
        jobType: 'dns-record',
        action: 'create',
        objectId: String(id),
        payload,
      });
      return this.jobRow(actor, trx, jobId);
    });
    this.opts.onEnqueued?.();
    return job;
  }

  /**
   * Enqueues the deletion of a record; returns the job. Managed records (the DKIM key) cannot be
   * deleted (403, spec §4.3.6); base records can. A record already being deleted answers with its
   * pending delete job, so a repeated DELETE is harmless.
   */
  async delete(actor: Actor, id: string): Promise<QueueJobRow> {
    const found = await this.get(actor, id);
    if (found.tag === 'managed') {
      throw new AppError('record_not_deletable', 'This record is managed by the service (e.g. the DKIM key) and cannot be deleted (spec §4.3.6).');
    }
    let enqueued = false;
    const job = await this.db.transaction().execute(async (trx) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(found.domain);
      // Read again under the lock: a job or another DELETE may have changed it meanwhile.
      const row = await repo.byId(found.id);
      if (!row) throw notFound('dns-record');
      if (row.state === 'deleting') {
        const pending = await new QueueJobsRepository(trx).pendingJobFor('dns-record', 'delete', String(row.id));
        if (pending) return this.jobRow(actor, trx, pending.id);
      } else if (row.state === 'pending') {
        await repo.delete(row.id);
      } else {
        await repo.transition(row.id, 'active', 'deleting');
      }
      const payload: DnsRecordJobPayload = { domain: row.domain };
      const jobId = await new QueueJobsRepository(trx).insert({
        customerId: await repo.domainOwner(row.domain),
        jobType: 'dns-record',
        action: 'delete',
        objectId: String(row.id),
        payload,
      });
      enqueued = true;
      return this.jobRow(actor, trx, jobId);
    });
    if (enqueued) this.opts.onEnqueued?.();
    return job;
  }


}
