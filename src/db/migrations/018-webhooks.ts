// Webhooks (API guide "Webhooks"; docs/decisions/0027-webhooks.md): a customer's subscriptions, the
// outbox of events to send them, and the log of every attempt.
// - `webhooks`: `events` the JSON array of event names as the customer gave them; `secret` the
//   signing secret sealed with a key (`<key id>.<iv>.<ciphertext>.<tag>`), never shown again;
//   `status` `ok` or `failing` (with `failing_reason`) after an event could not be delivered in 24 h.
// - `webhook_messages`: one row per event and webhook, written in the transaction of the change it
//   reports (the outbox). `event_id` is the Standard Webhooks `webhook-id`, one per event;
//   `order_key` names the object, and a message waits while an older one of its webhook and object
//   is pending. `state` `pending` | `delivered` | `failed`; a sender holds it under a lease.
// - `webhook_deliveries`: one row per attempt (GET /webhooks/{id}/deliveries).
// - `webhook_keys`: the store's own sealing key, made here, used unless WEBHOOK_SECRET_KEY is set.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('webhooks'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failing_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_customer').on('webhooks').column('customer_id').execute();

  await withIdColumn(engine, db.schema.createTable('webhook_messages'))
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('order_key', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_messages_due').on('webhook_messages').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_messages_order').on('webhook_messages').columns(['webhook_id', 'order_key', 'id']).execute();

  await withIdColumn(engine, db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_attempted').on('webhook_deliveries').column('attempted_at').execute();

  await db.schema
    .createTable('webhook_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.insertInto('webhook_keys').values({ id: 'store', key: crypto.randomBytes(32).toString('base64'), created_at: new Date().toISOString() }).execute();
}
