// Row types of the tables behind an automation's safeguards (API guide "Safe retries", "Webhooks",
// "Audit events"): kept beside src/db/schema.ts, which lists them in Database.
import type { Generated } from 'kysely';

/** The first answer to a write sent with an Idempotency-Key (migration 017; API guide "Safe retries"). */
export interface IdempotencyKeysTable {
  /** `token:<api token id>`, `contact:<id>` (a panel session) or `customer:<id>` (the legacy reseller password). */
  scope: string;
  idempotency_key: string;
  /** Of the first request's method, path and body (src/http/idempotency-key.ts). */
  fingerprint: string;
  /** Random, per request that holds the key: only it stores the answer. */
  claim: string;
  /** The answer; null while the first request runs. */
  status: number | null;
  /** JSON object of the answer's headers (src/http/idempotency.ts says which). */
  headers: string | null;
  body: string | null;
  created_at: string;
  expires_at: string;
}

/** A customer's webhook (migration 018; API guide "Webhooks"); `events` a JSON array, `secret` sealed (never shown or logged). */
export interface WebhooksTable {
  id: Generated<number>;
  customer_id: number;
  url: string;
  events: string;
  description: Generated<string>;
  /** 0 or 1, as every boolean of the store. */
  active: 0 | 1;
  secret: string;
  status: 'ok' | 'failing';
  failing_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One event for one webhook (migration 018): `event_id` is the `webhook-id`, `order_key` the object, `data` JSON. */
export interface WebhookMessagesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: string;
  event: string;
  order_key: string;
  data: string;
  occurred_at: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  finished_at: string | null;
}

/** One attempt to deliver a message (migration 018; GET /webhooks/{id}/deliveries). */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: string;
  event: string;
  attempt: number;
  status: 'delivered' | 'failed';
  response_status: number | null;
  error: string | null;
  occurred_at: string;
  attempted_at: string;
  duration_ms: number;
  next_attempt_at: string | null;
}

/** The store's own key sealing webhook secrets without WEBHOOK_SECRET_KEY (migration 018). */
export interface WebhookKeysTable {
  id: string;
  key: string;
  created_at: string;
}

/** One recorded request (migration 020; API guide "Audit events"): who, from where, what, with which answer. */
export interface AuditEventsTable {
  id: Generated<number>;
  created_at: string;
  /** When the purge job deletes it: created_at + AUDIT_RETENTION_DAYS as they were then. */
  expires_at: string;
  /** The caller's customer; null when the caller is unknown (refused authentication): operators only. */
  customer_id: number | null;
  contact_id: number | null;
  /** The api_tokens row of the request's token (never the token); null without one. */
  token_id: number | null;
  client_ip: string;
  method: string;
  /** Path and query as sent, query credentials redacted (src/http/log-url.ts). */
  path: string;
  status: number;
  request_id: string;
  /** The job a 202 answer carried. */
  queue_job_id: number | null;
  /** The request's Idempotency-Key header, at most 255 characters. */
  idempotency_key: string | null;
}
