// audit-event (API guide "Audit events", an addition to the original API): the wire
// representation. Attribute order: `created_at, method, path, status, customer_id, contact_id,
// token_id, client_ip, request_id, queue_job_id, idempotency_key`.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { EXTENSION, Nullable, Timestamp, ToOne, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { AuditEventRow } from './audit-events.repository.js';

export { AUDIT_EVENT_FILTERS } from './audit-events.rules.js';

/** The example is the first event of a new store (the first write the examples make). */
export const AuditEventIdParam = idParam('1');

const Id = (description: string) => Nullable(Type.String(), description);

/** What auditEventResource emits (OpenAPI components AuditEvent, AuditEventDocument, AuditEventList). */
export const AuditEventSchemas = resourceSchemas('AuditEvent', 'audit-event', {
  attributes: Type.Object({
    created_at: Timestamp('when the answer was sent'),
    method: Type.String({ description: 'POST, PUT, PATCH or DELETE; any method for a refused authentication' }),
    path: Type.String({ description: 'path and query as sent (repeated slashes folded), credentials in the query replaced by [Redacted]' }),
    status: Type.Integer({ minimum: 100, maximum: 599, description: 'the HTTP status of the answer' }),
    customer_id: Id("the caller's customer; null when the caller was not known (refused authentication: such events are shown to the operator only)"),
    contact_id: Id("the contact whose token was used; null for a reseller's legacy password or an unknown caller"),
    token_id: Id("the id of the request's API token (never the token itself); null without a valid one"),
    client_ip: Type.String({ description: "the client's address (behind trusted proxies: from X-Forwarded-For)" }),
    request_id: Type.String({ description: 'the x-request-id of the answer' }),
    queue_job_id: Id('the job a 202 answer carried'),
    idempotency_key: Id('the Idempotency-Key header of the request, at most 255 characters'),
  }),
  relationships: Type.Object({
    customer: ToOne('customer', { nullable: true }),
    'queue-job': ToOne('queue-job', { nullable: true, description: 'the job of a 202 answer (purged 24 h after it is done, like every job)' }),
  }),
  description: 'A request that changed or tried to change something, or whose authentication was refused (an addition to the original API)',
  example: {
    type: 'audit-event',
    id: '1',
    attributes: {
      created_at: '2026-11-22T03:51:28.685Z',
      method: 'POST',
      path: '/dns-records',
      status: 202,
      customer_id: '10002',
      contact_id: '2',
      token_id: '2',
      client_ip: '203.0.113.7',
      request_id: '4f0c6a52-8f43-4d0e-9a5e-2b1f4c1d7e11',
      queue_job_id: '1',
      idempotency_key: null,
    },
    relationships: { customer: { data: { type: 'customer', id: '10002' } }, 'queue-job': { data: { type: 'queue-job', id: '1' } } },
    links: { self: 'https://api.example.net/audit-events/1' },
  },
});
// The component itself is the extension: its members are all new.
Object.assign(AuditEventSchemas.resource, EXTENSION);

const str = (id: number | null) => (id === null ? null : String(id));

/** The attributes of an event, in their order; also what `hostplane admin audit --json` prints. */
export const auditEventAttributes = (row: AuditEventRow) => ({
  created_at: row.created_at,
  method: row.method,
  path: row.path,
  status: row.status,
  customer_id: str(row.customer_id),
  contact_id: str(row.contact_id),
  token_id: str(row.token_id),
  client_ip: row.client_ip,
  request_id: row.request_id,
  queue_job_id: str(row.queue_job_id),
  idempotency_key: row.idempotency_key,
});

export function auditEventResource(row: AuditEventRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return {
    type: 'audit-event',
    id,
    attributes: auditEventAttributes(row),
    relationships: { customer: ref('customer', row.customer_id), 'queue-job': ref('queue-job', row.queue_job_id) },
    links: { self: links.to('/audit-events/', id) },
  };
}
