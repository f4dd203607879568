// Job handlers of DNS records (spec §3.1; docs/decisions/0003-dns-propagation.md): ('dns-record',
// 'create') publishes a pending record, ('dns-record', 'delete') removes a record; both are done
// only when every live DNS server answers the change (isApplied).
//
// Each run is idempotent: the change and the progress that names it are written in one
// transaction (saveProgress(…, trx)), so a run that dies before it commits changes nothing and a
// run after it only waits. The domain row is locked first, as everywhere (dns-records.repository).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { parseNumericId } from '../../db/ids.js';
import { isApplied, recordChange } from '../../provisioning/dns/propagation.js';
import type { Config } from '../../config.js';
import { PermanentJobError, type HandlerRegistry, type JobContext, type JobResult } from '../../queue/types.js';
import { DnsRecordsRepository } from './dns-records.repository.js';
import type { DnsRecordJobPayload } from './dns-records.service.js';

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

function target(ctx: JobContext): { id: number; domain: string } {
  const id = ctx.job.object_id === null ? null : parseNumericId(ctx.job.object_id);
  const domain = (ctx.payload as Partial<DnsRecordJobPayload> | null)?.domain;
  if (id === null || typeof domain !== 'string') throw new PermanentJobError('job has no DNS record or domain');
  return { id, domain };
}

/**
 * Runs `change` (returns false when there is nothing to announce) and, when it changed the zone,
 * records the change and saves its id as progress — all in one transaction; then waits until the
 * DNS servers answer it.
 */
async function changeThenWait(ctx: JobContext, live: LiveServers, domain: string, change: (repo: DnsRecordsRepository) => Promise<boolean>): Promise<JobResult> {
  let changeId = savedChange(ctx.progress);
  if (changeId === null) {
    changeId = await ctx.store.db.transaction().execute(async (trx: Kysely<Database>) => {
      const repo = new DnsRecordsRepository(trx);
      await repo.lockDomain(domain);
      if (!(await change(repo))) return null;
      const id = await recordChange(trx, domain);
      await ctx.saveProgress({ changeId: id } satisfies Progress, trx);
      return id;
    });
    if (changeId === null) return { status: 'done' };
  }
  return (await isApplied(ctx.store, changeId, live)) ? { status: 'done' } : { status: 'wait', ms: applyPollMs(ctx.job) };
}

/**
 * Create: pending → active. A record deleted before its create job ran is simply done (nothing
 * to publish); one already active or deleting (a re-run) is announced again, which is harmless.
 */
async function createHandler(ctx: JobContext, live: LiveServers): Promise<JobResult> {
  const { id, domain } = target(ctx);
  return changeThenWait(ctx, live, domain, async (repo) => {
    const row = await repo.byId(id);
    if (!row) return false;
    if (row.state === 'pending') await repo.transition(id, 'pending', 'active');
    return true;
  });
}

/**
 * Delete: the row goes and the zone changes. The row may already be gone (a pending record that
 * DELETE removed at once, or a base record reset by a plan change); the change is announced all
 * the same, so the job is done only when the servers no longer answer the record.
 */
async function deleteHandler(ctx: JobContext, live: LiveServers): Promise<JobResult> {
  const { id, domain } = target(ctx);
  return changeThenWait(ctx, live, domain, async (repo) => {
    await repo.delete(id);
    return true;
  });
}

/** Which DNS servers a job waits for: those with a heartbeat within `staleMs` (DNS_SERVER_STALE_MS). */
interface LiveServers {
  staleMs: number;
}

/** `registerDnsRecordHandlers(handlers, config)` in src/queue/handlers.ts. */
export function registerDnsRecordHandlers(handlers: HandlerRegistry, config: Pick<Config, 'dns'>): HandlerRegistry {
  const live: LiveServers = { staleMs: config.dns.serverStaleMs };
  return handlers
    .register('dns-record', 'create', (ctx) => createHandler(ctx, live))
    .register('dns-record', 'delete', (ctx) => deleteHandler(ctx, live));
}
