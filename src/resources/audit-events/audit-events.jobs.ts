// The audit trail's retention (API guide "Audit events"; docs/decisions/0029-audit-trail.md):
// ('audit-event', 'purge') runs every hour on a worker of the general queue and deletes the events
// whose expiry has passed. Each event carries its expiry from when it was recorded, so the job
// needs no settings and every worker deletes the same rows.
import { Type } from 'typebox';
import { defineJob, DONE } from '../job-contract.js';
import { AuditEventsService } from './audit-events.service.js';

/** How often expired events are deleted: they outlive their expiry by at most this. */
export const AUDIT_PURGE_EVERY_MS = 60 * 60 * 1000;

export const auditPurgeJob = defineJob({
  type: 'audit-event',
  action: 'purge',
  payload: Type.Object({}),
  every: AUDIT_PURGE_EVERY_MS,
  run: async (ctx) => {
    const purged = await new AuditEventsService(ctx).purgeExpired();
    if (purged) ctx.log.info({ purged }, 'purged expired audit events');
    return DONE;
  },
});

export const AUDIT_EVENT_JOBS = [auditPurgeJob];
