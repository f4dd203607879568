// What the audit-event tests share (API guide "Audit events"): the stored rows, the token id of a
// tenant, the resource object a client sees for a row, and events written straight through the
// service for the read tests (filters, paging, retention) that need exact times and paths.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../src/db/index.js';
import type { AuditEventRow, NewAuditEvent } from '../../src/resources/audit-events/audit-events.repository.js';
import { AuditEventsService } from '../../src/resources/audit-events/audit-events.service.js';
import { BASE } from './app.js';

/** A store, and the app whose events it holds (its events waiting to be written are written first). */
export interface AuditSource {
  store: Store;
  app?: FastifyInstance;
}

/** Every stored event, oldest first, once the app's waiting events are written. */
export async function auditRows(t: AuditSource): Promise<AuditEventRow[]> {
  await t.app?.auditTrail.settled();
  return t.store.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
}

/** The events stored after `since` (an event id; 0 for all), oldest first. */
export const auditRowsAfter = async (t: AuditSource, since: number) => (await auditRows(t)).filter((r) => r.id > since);

/** The id of the newest event, 0 when there is none: what a test remembers before its requests. */
export const lastAuditId = async (t: AuditSource) => (await auditRows(t)).at(-1)?.id ?? 0;

/** The api_tokens id of the (one) token of contact `contactId`. */
export async function tokenIdOf(store: Store, contactId: number): Promise<number> {
  return (await store.db.selectFrom('api_tokens').select('id').where('contact_id', '=', contactId).executeTakeFirstOrThrow()).id;
}

/** Stores `event` with the defaults of a plain POST answered 202 by nobody in particular. */
export async function storeEvent(store: Store, event: Partial<NewAuditEvent>): Promise<void> {
  await new AuditEventsService({ store }).record([{
    created_at: '2026-11-22T03:00:00.000Z',
    expires_at: '2999-01-01T00:00:00.000Z',
    customer_id: null,
    contact_id: null,
    token_id: null,
    client_ip: '192.0.2.1',
    method: 'POST',
    path: '/dns-records',
    status: 202,
    request_id: 'req',
    queue_job_id: null,
    idempotency_key: null,
    ...event,
  }]);
}

const str = (n: number | null) => (n === null ? null : String(n));

/** The resource object of a stored event, as GET /audit-events shows it. */
export function auditEventObject(r: AuditEventRow) {
  return {
    type: 'audit-event',
    id: String(r.id),
    attributes: {
      created_at: r.created_at,
      method: r.method,
      path: r.path,
      status: r.status,
      customer_id: str(r.customer_id),
      contact_id: str(r.contact_id),
      token_id: str(r.token_id),
      client_ip: r.client_ip,
      request_id: r.request_id,
      queue_job_id: str(r.queue_job_id),
      idempotency_key: r.idempotency_key,
    },
    relationships: {
      customer: { data: r.customer_id === null ? null : { type: 'customer', id: String(r.customer_id) } },
      'queue-job': { data: r.queue_job_id === null ? null : { type: 'queue-job', id: String(r.queue_job_id) } },
    },
    links: { self: `${BASE}/audit-events/${r.id}` },
  };
}
