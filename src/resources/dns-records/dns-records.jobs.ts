// Jobs of DNS records (API guide "Queue jobs"; docs/decisions/0003-dns-propagation.md):
// ('dns-record', 'create') publishes a pending record, ('dns-record', 'delete') removes a record;
// both are done only when every live DNS server answers the change (the DNS driver's isApplied).
//
// Each run is idempotent: the change and the progress that names it are written in one
// transaction (saveProgress(…, trx)), so a run that dies before it commits changes nothing and a
// run after it only waits. The domain row is locked first, as everywhere (dns-records.repository).
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { defineJob, objectIdOf, type JobContext, type JobResult } from '../job-contract.js';
import { DnsRecordsRepository } from './dns-records.repository.js';

/** What a DNS-record job carries: the zone, so the run locks and announces it even when the record is gone. */
export const DnsRecordJobPayload = Type.Object({ domain: Type.String({ minLength: 1 }) });
export type DnsRecordJobPayload = Static<typeof DnsRecordJobPayload>;

/**
 * How long a job waits before it checks again whether the DNS servers answer its change: briefly
 * at first (a live server applies a change within milliseconds), then less often, so jobs that
 * wait for a server that is down (or DNS_LISTEN=off everywhere) cost one query a second.
 */
export function applyPollMs(job: { created_at: string }, now = Date.now()): number {
  const age = now - Date.parse(job.created_at);
  return age < 2_000 ? 20 : age < 30_000 ? 200 : 1_000;
}

interface Progress {
  changeId: number;
}

const savedChange = (progress: unknown): number | null => {
  const id = (progress as Partial<Progress> | null)?.changeId;
  return typeof id === 'number' ? id : null;
};

type Ctx = JobContext<DnsRecordJobPayload>;

/**
 * Runs `change` (returns false when there is nothing to announce, else the owner names it touched,
 * null when not known) and, when it changed the zone, records the change and saves its id as
 * progress — all in one transaction; then waits until the DNS servers answer it.
 */
async function changeThenWait(ctx: Ctx, change: (repo: DnsRecordsRepository) => Promise<false | string[] | null>): Promise<JobResult> {
  const { domain } = ctx.payload;
  const dns = ctx.drivers.dns;
  let changeId = savedChange(ctx.progress);
  if (changeId === null) {
    changeId = await ctx.store.db.transaction().execute(async (trx: Kysely<Database>) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(domain);
      const owners = await change(repo);
      if (owners === false) return null;
      const id = await dns.recordChange(trx, domain, owners);
      await ctx.saveProgress({ changeId: id } satisfies Progress, trx);
      return id;
    });
    if (changeId === null) return { status: 'done' };
  }
  return (await dns.isApplied(changeId)) ? { status: 'done' } : { status: 'wait', ms: applyPollMs(ctx.job) };
}

/**
 * Create: pending → active. A record deleted before its create job ran is simply done (nothing
 * to publish); one already active or deleting (a re-run) is announced again, which is harmless.
 */
export const createDnsRecordJob = defineJob({
  type: 'dns-record',
  action: 'create',
  payload: DnsRecordJobPayload,
  run: async (ctx) => {
    const id = objectIdOf(ctx.job);
    return changeThenWait(ctx, async (repo) => {
      const row = await repo.byId(id);
      if (!row) return false;
      if (row.state === 'pending') await repo.transition(id, 'pending', 'active');
      return [row.name];
    });
  },
});

/**
 * Delete: the row goes and the zone changes. The row may already be gone (a pending record that
 * DELETE removed at once, or a base record reset by a plan change); the change is announced all
 * the same, so the job is done only when the servers no longer answer the record.
 */
export const deleteDnsRecordJob = defineJob({
  type: 'dns-record',
  action: 'delete',
  payload: DnsRecordJobPayload,
  run: async (ctx) => {
    const id = objectIdOf(ctx.job);
    return changeThenWait(ctx, async (repo) => {
      const row = await repo.byId(id);
      await repo.delete(id);
      return row ? [row.name] : null;
    });
  },
});

export const DNS_RECORD_JOBS = [createDnsRecordJob, deleteDnsRecordJob];
