// The webhook events of a job's outcome (API guide "Webhooks"; docs/decisions/0027-webhooks.md),
// recorded by the worker in the transaction that marks the job done or failed (the job registry's
// outcome observer, src/resources/jobs.ts): an event exists exactly when the outcome does.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { randomAlnum } from '../../security/password-generator.js';
import { OutboxRepository } from './webhooks.outbox.repository.js';
import { jobEvents } from './webhooks.rules.js';

/** A Standard Webhooks message id: `msg_` + 22 base62 characters, one per event. */
export const newEventId = () => `msg_${randomAlnum(22)}`;

/**
 * `registry.onOutcome(recordJobEvents)`: the job's events for every webhook that wants them. One
 * object's events share an order key, so they reach each webhook in the order they occurred.
 */
export async function recordJobEvents(db: Kysely<Database>, job: QueueJobRow): Promise<void> {
  const events = jobEvents(job);
  if (!events.length) return;
  const outbox = new OutboxRepository(db);
  const orderKey = job.object_id === null ? `queue-job:${job.id}` : `${job.job_type}:${job.object_id}`;
  const occurredAt = job.finished_at ?? new Date().toISOString();
  for (const e of events) {
    await outbox.record({ customerId: job.customer_id!, event: e.event, eventId: newEventId(), orderKey, data: JSON.stringify(e.data), occurredAt });
  }
}
