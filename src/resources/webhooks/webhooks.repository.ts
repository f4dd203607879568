// All SQL of webhooks as the API sees them (API guide "Webhooks"): scoped reads and writes of the
// webhooks (a webhook is visible when its customer is in the caller's scope, src/db/scope.ts), the
// attempts of one webhook, and the store's own sealing key. The outbox (events, their claims and
// outcomes) is webhooks.outbox.repository.ts.
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import { storeSealingKey } from '../../security/secret-box.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** Filters after parsing: each given one holds at least one value (OR within, AND across). */
export interface WebhookFilters {
  customerIds?: number[];
  statuses?: string[];
}

export interface DeliveryFilters {
  events?: string[];
  statuses?: string[];
  eventIds?: string[];
}

export interface NewWebhook {
  customer_id: number;
  url: string;
  events: string;
  description: string;
  active: 0 | 1;
  secret: string;
}

export class WebhooksRepository {
  /** Pass a transaction for writes that belong together. */
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('webhooks').selectAll('webhooks').where(visibleTo(actor, 'webhooks.customer_id'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('webhooks.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: WebhookFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.customerIds) q = q.where('webhooks.customer_id', 'in', f.customerIds);
    if (f.statuses) q = q.where('webhooks.status', 'in', f.statuses as WebhookRow['status'][]);
    return fetchPage(q.orderBy('webhooks.id'), page);
  }

  /** Every webhook (the operator's list), optionally of one customer. */
  all(customerId?: number) {
    let q = this.db.selectFrom('webhooks').selectAll();
    if (customerId !== undefined) q = q.where('customer_id', '=', customerId);
    return q.orderBy('id').execute();
  }

  /** Whether customer `id` is in the caller's scope (itself, or an end customer of a reseller). */
  async customerVisible(actor: Actor, id: number): Promise<boolean> {
    const row = await this.db.selectFrom('customers').select('customers.id').where('customers.id', '=', id).where(visibleTo(actor, 'customers.id')).executeTakeFirst();
    return row !== undefined;
  }

  async countOf(customerId: number): Promise<number> {
    const r = await this.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('customer_id', '=', customerId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  insert(w: NewWebhook): Promise<WebhookRow> {
    const now = nowIso();
    return this.db.insertInto('webhooks').values({ ...w, status: 'ok', failing_reason: null, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, set: Updateable<WebhooksTable>): Promise<WebhookRow> {
    return this.db.updateTable('webhooks').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async setSecret(id: number, sealed: string): Promise<void> {
    await this.db.updateTable('webhooks').set({ secret: sealed }).where('id', '=', id).execute();
  }

  /** Removes the webhook with its messages and attempts (they cascade). */
  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('webhooks').where('id', '=', id).execute();
  }

  /** Drops the events still waiting for the webhook (it was switched off). */
  async dropPending(id: number): Promise<void> {
    await this.db.deleteFrom('webhook_messages').where('webhook_id', '=', id).where('state', '=', 'pending').execute();
  }

  /** The attempts of one webhook, newest first. */
  deliveries(webhookId: number, f: DeliveryFilters, page: Page | null) {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
    if (f.events) q = q.where('event', 'in', f.events);
    if (f.statuses) q = q.where('status', 'in', f.statuses as WebhookDeliveryRow['status'][]);
    if (f.eventIds) q = q.where('event_id', 'in', f.eventIds);
    return fetchPage(q.orderBy('id', 'desc'), page);
  }

  /** The store's own sealing key (base64; migration 018). */
  storeKey(): Promise<string> {
    return storeSealingKey(this.db);
  }
}
