// The audit trail's retention (API guide "Audit events"; docs/decisions/0029-audit-trail.md):
// ('audit-event', 'purge') runs every hour on a worker of the general queue and deletes the events
// whose expiry has passed. Each event carries its expiry from when it was recorded, so the job
// needs no settings and every worker deletes the same rows.
import { purgeJob } from '../../queue/types.js';
import { AuditEventsService } from './audit-events.service.js';

export const auditPurgeJob = purgeJob('audit-event', 'purge', 'expired audit events', (ctx) => new AuditEventsService(ctx).purgeExpired());

export const AUDIT_EVENT_JOBS = [auditPurgeJob];
