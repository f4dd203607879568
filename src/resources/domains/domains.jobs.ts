// The job of a domain (API guide "DNSSEC (extension)", "Queue jobs"): ('domain', 'update') follows
// a PATCH that turned DNSSEC on or off. The PATCH wrote the choice and the change of the whole zone;
// the job is done once every DNS server of hostplane and every registered secondary serves the zone
// as chosen (the DNS driver's isApplied). Off goes through `disabling` first (the zone stays signed
// until the parent has dropped its DS, src/dns/dnssec-lifecycle.ts): the job waits for that phase to
// end and for the change that then serves the zone unsigned.
import { Type, type Static } from 'typebox';
import { defineJob } from '../job-contract.js';
import { applyPollMs } from '../dns-records/dns-records.jobs.js';
import { DnssecRepository } from '../../dns/dnssec.repository.js';
import { ChangeLogRepository } from '../../provisioning/dns/change-log.repository.js';

/** How often a job checks whether a `disabling` phase has ended: it waits for the parent and TTLs. */
const PHASE_POLL_MS = 1000;

export const DomainJobPayload = Type.Object({ domain: Type.String({ minLength: 1 }), changeId: Type.Integer({ minimum: 1 }) });
export type DomainJobPayload = Static<typeof DomainJobPayload>;

export const updateDomainJob = defineJob({
  type: 'domain',
  action: 'update',
  payload: DomainJobPayload,
  run: async (ctx) => {
    const { dns } = ctx.drivers;
    const wait = { status: 'wait', ms: applyPollMs(ctx.job) } as const;
    if (!(await dns.isApplied(ctx.payload.changeId))) return wait;
    const row = await new DnssecRepository(ctx.store.db, []).phaseOf(ctx.payload.domain);
    // Gone, turned on (again), or not turned off by this job: served as asked.
    if (!row || row.dnssec !== 0) return { status: 'done' };
    if (row.dnssec_phase === 'disabling') return { status: 'wait', ms: PHASE_POLL_MS };
    const last = await new ChangeLogRepository(ctx.store.db).latestOf(ctx.payload.domain);
    return last <= ctx.payload.changeId || (await dns.isApplied(last)) ? { status: 'done' } : wait;
  },
});

export const DOMAIN_JOBS = [updateDomainJob];
