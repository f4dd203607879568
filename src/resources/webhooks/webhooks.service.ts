// Rules of webhooks (API guide "Webhooks"; docs/decisions/0027-webhooks.md). A webhook belongs to a
// customer — the caller, or an end customer a reseller names — and gets the events of that
// customer's objects; a reseller's own webhook also gets its end customers'. Its writes change only
// the store (no backend, no job): 201 / 200 / 204. The signing secret is made here, shown once in
// the answer of POST and kept sealed.
import type { Actor } from '../../auth/actor.js';
import type { Store } from '../../db/index.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findChecked, type Precondition } from '../../db/locks.js';
import type { Config } from '../../config.js';
import { invalidField, limitReached, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues, parseNumericId } from '../../db/ids.js';
import type { ServiceDeps } from '../service-deps.js';
import { addressPolicy, type AddressPolicy } from './webhooks.addresses.js';
import { WebhooksRepository, type WebhookDeliveryRow, type WebhookRow } from './webhooks.repository.js';
import { eventsProblem, webhookUrl } from './webhooks.rules.js';
import { generateSecret } from './webhooks.secrets.js';
import { secretBox } from '../../security/secret-box.js';

/** Webhooks one customer may have: each event is sent once per webhook, so this bounds the fan-out. */
export const MAX_WEBHOOKS_PER_CUSTOMER = 20;

export interface WebhookCreateInput {
  customer_id?: string;
  url: unknown;
  events: unknown;
  description?: string | null;
  active?: boolean;
}

export interface WebhookUpdateInput {
  url?: unknown;
  events?: unknown;
  description?: string | null;
  active?: boolean;
}

export class WebhooksService {
  private readonly store: Store;
  private readonly config: Config;
  private readonly policy: AddressPolicy;

  constructor(deps: Pick<ServiceDeps, 'store' | 'config'>) {
    this.store = deps.store;
    this.config = deps.config;
    this.policy = addressPolicy(deps.config.webhooks);
  }

  private get repo() {
    return new WebhooksRepository(this.store.db);
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<WebhookRow>> {
    const customerIds = idValues(filters.customer_id);
    if (customerIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { customerIds, statuses: filters.status }, page);
  }

  get(actor: Actor, id: string): Promise<WebhookRow> {
    return findOr404('webhook', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * Stores a webhook with a new secret: 422 (with a pointer) for a bad url or events, 404 for a
   * customer out of scope, 409 past MAX_WEBHOOKS_PER_CUSTOMER. Returns the row and the secret,
   * which nothing shows again.
   */
  async create(actor: Actor, input: WebhookCreateInput): Promise<{ row: WebhookRow; secret: string }> {
    const url = this.checkedUrl(input.url);
    const events = checkedEvents(input.events);
    const customerId = input.customer_id === undefined ? actor.customerId : parseNumericId(input.customer_id);
    const secret = generateSecret();
    const sealed = await this.seal(secret);
    const row = await this.store.db.transaction().execute(async (trx) => {
      const repo = new WebhooksRepository(trx);
      if (customerId === null || !(await repo.customerVisible(actor, customerId))) throw notFound('customer');
      if ((await repo.countOf(customerId)) >= MAX_WEBHOOKS_PER_CUSTOMER) {
        throw limitReached(`This customer has ${MAX_WEBHOOKS_PER_CUSTOMER} webhooks, the most it may have; delete one first.`);
      }
      return repo.insert({ customer_id: customerId, url, events: JSON.stringify(events), description: input.description ?? '', active: input.active === false ? 0 : 1, secret: sealed });
    });
    return { row, secret };
  }

  /** Changes what is given; switching a webhook off drops the events still waiting for it. */
  async update(actor: Actor, id: string, input: WebhookUpdateInput, precondition?: Precondition<WebhookRow>): Promise<WebhookRow> {
    const url = input.url === undefined ? undefined : this.checkedUrl(input.url);
    const events = input.events === undefined ? undefined : JSON.stringify(checkedEvents(input.events));
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new WebhooksRepository(trx);
      const row = await current(trx, actor, id, precondition);
      if (input.active === false) await repo.dropPending(row.id);
      return repo.update(row.id, {
        ...(url === undefined ? {} : { url }),
        ...(events === undefined ? {} : { events }),
        ...(input.description === undefined ? {} : { description: input.description ?? '' }),
        ...(input.active === undefined ? {} : { active: input.active ? 1 : 0 }),
      });
    });
  }

  /** Removes the webhook, its waiting events and its attempts. */
  async delete(actor: Actor, id: string, precondition?: Precondition<WebhookRow>): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const row = await current(trx, actor, id, precondition);
      await new WebhooksRepository(trx).delete(row.id);
    });
  }

  /** The attempts of a webhook in the caller's scope, newest first. */
  async deliveries(actor: Actor, id: string, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<WebhookDeliveryRow>> {
    const row = await this.get(actor, id);
    return this.repo.deliveries(row.id, { events: filters.event, statuses: filters.status, eventIds: filters.event_id }, page);
  }

  /** Every webhook, or one customer's: the operator's view (`hostplane admin webhook list`). */
  all(customerId?: number): Promise<WebhookRow[]> {
    return this.repo.all(customerId);
  }

  /**
   * Seals every secret again with the first key of WEBHOOK_SECRET_KEY (`hostplane admin webhook
   * reseal`, after a new key was put first); how many changed. Then the old key can go.
   */
  async reseal(): Promise<number> {
    const repo = this.repo;
    const box = secretBox(this.config.webhooks.secretKeys, await repo.storeKey());
    let n = 0;
    for (const w of await repo.all()) {
      const again = box.reseal(w.secret);
      if (again === null) continue;
      await repo.setSecret(w.id, again);
      n++;
    }
    return n;
  }

  private checkedUrl(input: unknown): string {
    const checked = webhookUrl(input, this.policy);
    if (!checked.ok) throw invalidField('url', checked.detail);
    return checked.url;
  }

  private async seal(secret: string): Promise<string> {
    return secretBox(this.config.webhooks.secretKeys, await this.repo.storeKey()).seal(secret);
  }
}

function checkedEvents(input: unknown): string[] {
  const problem = eventsProblem(input);
  if (problem) throw invalidField(problem.at, problem.detail);
  return input as string[];
}

/** The webhook a write changes, read in its transaction; checked by a precondition (API guide "Safe retries"), under its row lock. */
function current(trx: Kysely<Database>, actor: Actor, id: string, precondition: Precondition<WebhookRow> | undefined): Promise<WebhookRow> {
  return findChecked(trx, precondition, 'webhooks', 'webhook', id, (n) => new WebhooksRepository(trx).findVisible(actor, n));
}
