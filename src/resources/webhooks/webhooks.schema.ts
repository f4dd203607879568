// webhook and webhook-delivery (API guide "Webhooks", an addition to the original API): request
// bodies and the wire representations. Webhook attributes in this order: `customer_id, url,
// events, description, active, status, failing_reason, created_at`, and `secret` in the answer of
// POST only. The rules of url and events are the service's (422 with the reason and a pointer).
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, EXTENSION, Nullable, RelatedList, StringEnum, Timestamp, ToOne, UpdateBody, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { WebhookDeliveryRow, WebhookRow } from './webhooks.repository.js';
import { EVENT_TYPES, MAX_URL_LENGTH } from './webhooks.rules.js';

export const WEBHOOK_FILTERS = ['customer_id', 'status'] as const;
export const DELIVERY_FILTERS = ['event', 'status', 'event_id'] as const;

const EXAMPLE_URL = 'https://hooks.example.net/hostplane';

const Url = Type.String({ description: `where events are POSTed: an https:// URL of at most ${MAX_URL_LENGTH} characters (plain http:// only for addresses the operator allows)`, examples: [EXAMPLE_URL] });
const Events = Type.Array(Type.String(), {
  maxItems: EVENT_TYPES.length,
  description: `the events to send, each once: ${EVENT_TYPES.join(', ')} (* is every event)`,
  examples: [['queue-job.done', 'queue-job.failed']],
});
const Description = Type.String({ maxLength: 255, description: 'free text for your own use; null stores ""' });
const Active = Type.Boolean({ description: 'false: nothing is sent, and events that occur meanwhile are not kept for it' });

export const WebhookCreateBody = CreateBody(
  'webhook',
  Type.Object(
    {
      customer_id: Type.Optional(Type.String({ description: 'whose events: yours (the default), or one of your end customers\'' })),
      url: Url,
      events: Events,
      description: Type.Optional(Nullable(Description)),
      active: Type.Optional(Active),
    },
    { additionalProperties: false },
  ),
  { url: EXAMPLE_URL, events: ['queue-job.done', 'queue-job.failed'], description: 'deploy bot' },
);

/** The examples read the first webhook of a store and delete the second, the one the POST example creates. */
export const WebhookIdParam = idParam('1');
export const WebhookDeleteParam = idParam('2');

export const WebhookUpdateBody = UpdateBody(
  'webhook',
  Type.Object(
    { url: Type.Optional(Url), events: Type.Optional(Events), description: Type.Optional(Nullable(Description)), active: Type.Optional(Active) },
    { additionalProperties: false },
  ),
  { id: '1', attributes: { events: ['*'] } },
);

/** What webhookResource emits (OpenAPI components Webhook, WebhookDocument, WebhookList). */
export const WebhookSchemas = resourceSchemas('Webhook', 'webhook', {
  attributes: Type.Object({
    customer_id: Type.String({ description: 'whose events it gets (a reseller\'s: its end customers\' too)' }),
    url: Type.String(),
    events: Type.Array(StringEnum([...EVENT_TYPES])),
    description: Type.String(),
    active: Type.Boolean(),
    status: StringEnum(['ok', 'failing'], 'failing: an event could not be delivered for 24 hours (failing_reason says why); ok again after the next delivery'),
    failing_reason: Nullable(Type.String(), 'why it is failing; null when ok'),
    created_at: Timestamp(),
    secret: Type.Optional(Type.String({ description: 'only in the answer of POST: the signing secret (whsec_…), shown once' })),
  }),
  relationships: Type.Object({ customer: ToOne('customer'), deliveries: RelatedList('its delivery attempts') }),
  description: 'A URL that events are sent to, signed as Standard Webhooks specifies (an addition to the original API)',
  example: {
    type: 'webhook',
    id: '1',
    attributes: {
      customer_id: '10002', url: EXAMPLE_URL, events: ['queue-job.done', 'queue-job.failed'], description: 'deploy bot', active: true,
      status: 'ok', failing_reason: null, created_at: '2026-11-22T03:51:28.685Z',
    },
    relationships: { customer: { data: { type: 'customer', id: '10002' } }, deliveries: { links: { related: 'https://api.example.net/webhooks/1/deliveries' } } },
    links: { self: 'https://api.example.net/webhooks/1' },
  },
});
// The components themselves are the extension: their members are all new.
Object.assign(WebhookSchemas.resource, EXTENSION);

export function webhookResource(row: WebhookRow, links: LinkBuilder, secret?: string): ResourceObject {
  const id = String(row.id);
  return {
    type: 'webhook',
    id,
    attributes: {
      customer_id: String(row.customer_id),
      url: row.url,
      events: JSON.parse(row.events) as string[],
      description: row.description,
      active: row.active === 1,
      status: row.status,
      failing_reason: row.failing_reason,
      created_at: row.created_at,
      ...(secret === undefined ? {} : { secret }),
    },
    relationships: { customer: ref('customer', row.customer_id), deliveries: { links: { related: links.to(`/webhooks/${id}/deliveries`) } } },
    links: { self: links.to('/webhooks/', id) },
  };
}

/** What deliveryResource emits (OpenAPI components WebhookDelivery, WebhookDeliveryList). */
export const WebhookDeliverySchemas = resourceSchemas('WebhookDelivery', 'webhook-delivery', {
  attributes: Type.Object({
    event: Type.String({ description: 'e.g. queue-job.done' }),
    event_id: Type.String({ description: 'the webhook-id header: the same on every attempt of one event' }),
    attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt of the event' }),
    status: StringEnum(['delivered', 'failed'], 'delivered: the receiver answered 2xx'),
    response_status: Nullable(Type.Integer(), "the receiver's HTTP status; null when it did not answer"),
    error: Nullable(Type.String(), 'why the attempt failed; null when delivered'),
    occurred_at: Timestamp('when the event occurred'),
    attempted_at: Timestamp(),
    duration_ms: Type.Integer({ minimum: 0 }),
    next_attempt_at: Nullable(Timestamp(), 'when the event is tried again; null when delivered or given up'),
  }),
  relationships: Type.Object({ webhook: ToOne('webhook') }),
  links: Type.Object({ webhook: Type.String({ description: 'URL of the webhook' }) }),
  description: 'One attempt to deliver an event to a webhook (an addition to the original API)',
  example: {
    type: 'webhook-delivery',
    id: '1',
    attributes: {
      event: 'queue-job.done', event_id: 'msg_2Zq8cQk1fP0mT3vXb7YhNw', attempt: 1, status: 'delivered', response_status: 204, error: null,
      occurred_at: '2026-11-22T03:51:29.102Z', attempted_at: '2026-11-22T03:51:29.310Z', duration_ms: 41, next_attempt_at: null,
    },
    relationships: { webhook: { data: { type: 'webhook', id: '1' } } },
    links: { webhook: 'https://api.example.net/webhooks/1' },
  },
});
Object.assign(WebhookDeliverySchemas.resource, EXTENSION);

export function deliveryResource(row: WebhookDeliveryRow, links: LinkBuilder): ResourceObject {
  return {
    type: 'webhook-delivery',
    id: String(row.id),
    attributes: {
      event: row.event,
      event_id: row.event_id,
      attempt: row.attempt,
      status: row.status,
      response_status: row.response_status,
      error: row.error,
      occurred_at: row.occurred_at,
      attempted_at: row.attempted_at,
      duration_ms: row.duration_ms,
      next_attempt_at: row.next_attempt_at,
    },
    relationships: { webhook: ref('webhook', row.webhook_id) },
    links: { webhook: links.to('/webhooks/', String(row.webhook_id)) },
  };
}
