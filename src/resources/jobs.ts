// Every job definition of the application (API guide "Queue jobs";
// docs/decisions/0004-provisioning-seams.md). `serve`, `hostplane worker` and the test helper all
// take their registry from here, so a job enqueued by any process is understood by every worker.
// Each resource registers its own definitions from its `<segment>.jobs.ts`; src/queue knows none.
import { JobRegistry } from '../queue/types.js';
import { DNS_RECORD_JOBS } from './dns-records/dns-records.jobs.js';
import { DATABASE_JOBS } from './databases/databases.jobs.js';
import { SUBDOMAIN_JOBS } from './subdomains/subdomains.jobs.js';
import { EMAIL_JOBS } from './email-addresses/email-addresses.jobs.js';
import { DKIM_JOBS } from './dns-records/dns-records.dkim.js';
import { SSH_KEY_JOBS } from './ssh-keys/ssh-keys.jobs.js';
import { recordJobEvents } from './webhooks/webhooks.events.js';
import { IDEMPOTENCY_JOBS } from '../http/idempotency.jobs.js';
import { AUDIT_EVENT_JOBS } from './audit-events/audit-events.jobs.js';
import { SESSION_JOBS } from './session/session.jobs.js';
import { DOMAIN_JOBS } from './domains/domains.jobs.js';

/**
 * `const jobs = buildJobs()`. A job whose (job_type, action) has no definition here is marked
 * failed by the worker. A job's outcome records its webhook events in the same transaction
 * (docs/decisions/0027-webhooks.md).
 */
export function buildJobs(): JobRegistry {
  return new JobRegistry().add(...DNS_RECORD_JOBS).add(...DATABASE_JOBS).add(...SUBDOMAIN_JOBS).add(...EMAIL_JOBS).add(...DKIM_JOBS).add(...SSH_KEY_JOBS).add(...IDEMPOTENCY_JOBS)
    .add(...AUDIT_EVENT_JOBS)
    .add(...SESSION_JOBS)
    .add(...DOMAIN_JOBS)
    .onOutcome(recordJobEvents);
}
