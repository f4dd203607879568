// The job of a domain (API guide "DNSSEC (extension)", "Queue jobs"): ('domain', 'update') follows
// a PATCH that turned DNSSEC on or off. The PATCH wrote the choice and the change of the whole zone;
// the job is done once every DNS server of hostplane and every registered secondary serves the zone
// as chosen (the DNS driver's isApplied).
import { Type, type Static } from 'typebox';
import { defineJob } from '../job-contract.js';
import { applyPollMs } from '../dns-records/dns-records.jobs.js';

export const DomainJobPayload = Type.Object({ domain: Type.String({ minLength: 1 }), changeId: Type.Integer({ minimum: 1 }) });
export type DomainJobPayload = Static<typeof DomainJobPayload>;

export const updateDomainJob = defineJob({
  type: 'domain',
  action: 'update',
  payload: DomainJobPayload,
  run: async (ctx) => ((await ctx.drivers.dns.isApplied(ctx.payload.changeId)) ? { status: 'done' } : { status: 'wait', ms: applyPollMs(ctx.job) }),
});

export const DOMAIN_JOBS = [updateDomainJob];
