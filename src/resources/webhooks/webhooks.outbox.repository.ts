// All SQL of the webhook outbox (docs/decisions/0027-webhooks.md): an event recorded for every
// webhook that wants it, in the transaction of the change it reports; the claim of due messages
// under a lease, in order per webhook and object; an attempt's outcome, fenced by the claim; the
// purge after retention.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, WebhookMessagesTable } from '../../db/schema.js';
import { isPostgres } from '../../db/dialect.js';

export type WebhookMessageRow = Selectable<WebhookMessagesTable>;

/** One event as recorded: for every active webhook of the customer, or of its reseller, that wants it. */
export interface OutboxEvent {
  customerId: number;
  event: string;
  eventId: string;
  orderKey: string;
  /** JSON of the payload's `data`. */
  data: string;
  occurredAt: string;
}

/** What an attempt ended in (OutboxRepository.finish). */
export interface AttemptOutcome {
  attempt: number;
  delivered: boolean;
  responseStatus: number | null;
  error: string | null;
  attemptedAt: string;
  durationMs: number;
  /** When to try again; null: no more (delivered, or given up). */
  nextAttemptAt: string | null;
  /** Given up: the webhook is marked failing with this reason. */
  failingReason: string | null;
}

export class OutboxRepository {
  /** Pass the transaction of the change the events report (record). */
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Records `e` for each webhook that wants it, in one statement: active, of the event's customer or
   * of that customer's reseller, subscribed to the event or to `*`. Event names are plain words
   * (letters, `-`, `.`), so a quoted LIKE matches one entry of the JSON array exactly.
   */
  async record(e: OutboxEvent): Promise<void> {
    const values = { event_id: e.eventId, event: e.event, order_key: e.orderKey, data: e.data, occurred_at: e.occurredAt, state: 'pending', attempts: 0, next_attempt_at: e.occurredAt };
    const columns = Object.keys(values) as (keyof typeof values)[];
    await this.db
      .insertInto('webhook_messages')
      .columns(['webhook_id', ...columns])
      .expression((eb) =>
        eb
          .selectFrom('webhooks')
          .select(['webhooks.id', ...columns.map((c) => sql.val(values[c]).as(c))])
          .where('webhooks.active', '=', 1)
          .where((w) =>
            w.or([
              w('webhooks.customer_id', '=', e.customerId),
              w('webhooks.customer_id', 'in', w.selectFrom('customers').select('customers.reseller_id').where('customers.id', '=', e.customerId)),
            ]),
          )
          .where((w) => w.or([w('webhooks.events', 'like', `%"${e.event}"%`), w('webhooks.events', 'like', '%"*"%')])),
      )
      .execute();
  }

  /**
   * Claims up to `limit` due messages for `owner` until `leaseUntil`, in one statement: pending,
   * due, lease free or run out, of an active webhook, and none older of the same webhook and object
   * still pending (so one object's events go out in order, one at a time). PostgreSQL skips rows
   * another sender is claiming; SQLite runs one writer at a time.
   */
  async claim(owner: string, limit: number, now: string, leaseUntil: string): Promise<WebhookMessageRow[]> {
    return this.db
      .updateTable('webhook_messages')
      .set({ lease_owner: owner, lease_until: leaseUntil })
      .where('id', 'in', (eb) => {
        const due = eb
          .selectFrom('webhook_messages as m')
          .select('m.id')
          .where('m.state', '=', 'pending')
          .where('m.next_attempt_at', '<=', now)
          .where((w) => w.or([w('m.lease_until', 'is', null), w('m.lease_until', '<', now)]))
          .where('m.webhook_id', 'in', (s) => s.selectFrom('webhooks').select('webhooks.id').where('webhooks.active', '=', 1))
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('webhook_messages as e')
                  .select('e.id')
                  .whereRef('e.webhook_id', '=', 'm.webhook_id')
                  .whereRef('e.order_key', '=', 'm.order_key')
                  .where('e.state', '=', 'pending')
                  .whereRef('e.id', '<', 'm.id'),
              ),
            ),
          )
          .orderBy('m.next_attempt_at')
          .orderBy('m.id')
          .limit(limit);
        return isPostgres(this.db) ? due.forUpdate().skipLocked() : due;
      })
      .returningAll()
      .execute();
  }

  /** Where and how to send the claimed messages: the webhooks by id. */
  targets(ids: number[]) {
    if (!ids.length) return Promise.resolve([]);
    return this.db.selectFrom('webhooks').select(['id', 'url', 'secret']).where('id', 'in', ids).execute();
  }

  /**
   * Writes an attempt's outcome if `owner` still holds the message: the message delivered, given up
   * or due again, the attempt in the log, and the webhook's status (ok after a delivery, failing
   * when given up). False, and nothing written, when the claim was lost (or the message is gone).
   * Run it in a transaction.
   */
  async finish(m: WebhookMessageRow, owner: string, o: AttemptOutcome): Promise<boolean> {
    const state = o.delivered ? 'delivered' : o.nextAttemptAt === null ? 'failed' : 'pending';
    const r = await this.db
      .updateTable('webhook_messages')
      .set({
        state,
        attempts: o.attempt,
        next_attempt_at: o.nextAttemptAt ?? o.attemptedAt,
        lease_owner: null,
        lease_until: null,
        finished_at: state === 'pending' ? null : o.attemptedAt,
      })
      .where('id', '=', m.id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await this.db
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: m.webhook_id, event_id: m.event_id, event: m.event, attempt: o.attempt, status: o.delivered ? 'delivered' : 'failed',
        response_status: o.responseStatus, error: o.error, occurred_at: m.occurred_at, attempted_at: o.attemptedAt, duration_ms: o.durationMs,
        next_attempt_at: o.nextAttemptAt,
      })
      .execute();
    if (o.delivered) {
      await this.db.updateTable('webhooks').set({ status: 'ok', failing_reason: null }).where('id', '=', m.webhook_id).where('status', '=', 'failing').execute();
    } else if (o.failingReason !== null) {
      await this.db.updateTable('webhooks').set({ status: 'failing', failing_reason: o.failingReason }).where('id', '=', m.webhook_id).execute();
    }
    return true;
  }

  /** Deletes finished messages and attempts older than `cutoff`; how many of each. */
  async purge(cutoff: string): Promise<{ messages: number; deliveries: number }> {
    const m = await this.db.deleteFrom('webhook_messages').where('state', '!=', 'pending').where('finished_at', '<', cutoff).executeTakeFirst();
    const d = await this.db.deleteFrom('webhook_deliveries').where('attempted_at', '<', cutoff).executeTakeFirst();
    return { messages: Number(m.numDeletedRows), deliveries: Number(d.numDeletedRows) };
  }
}
