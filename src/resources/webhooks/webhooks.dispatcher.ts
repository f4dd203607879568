// The webhook sender of a worker process (`hostplane serve`, `hostplane worker`; docs/decisions/
// 0027-webhooks.md): every `pollMs` it claims due messages under a lease (so instances sharing one
// store send each message once), sends them signed as Standard Webhooks specifies, and records each
// attempt: delivered, tried again later (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, …), or, 24 h after the
// event, given up with the webhook marked failing. Apart from the job worker's slots, so a slow
// receiver never holds up the jobs that change customers' hosting.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import { WorkerContext } from '../../queue/worker-context.js';
import { addressPolicy, type AddressPolicy } from './webhooks.addresses.js';
import { OutboxRepository, type WebhookMessageRow } from './webhooks.outbox.repository.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { nextAttemptAt } from './webhooks.rules.js';
import { sign } from './webhooks.secrets.js';
import { secretBox, type SecretBox } from '../../security/secret-box.js';
import { send, systemResolver, type ResolveName } from './webhooks.sender.js';

/** How long finished messages and the attempt log are kept (API guide "Webhooks"). */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface DispatcherOptions {
  store: Store;
  config: Config;
  log: FastifyBaseLogger;
  /** The clock of due times, retries and the 24-h window (tests move it forward) [the system's]. */
  now?: () => Date;
  /** How often it looks for due messages [250]. */
  pollMs?: number;
  /** Messages sent at the same time [8]. */
  concurrency?: number;
  /** How often finished messages past retention are deleted [1 h]. */
  purgeEveryMs?: number;
  /** How receivers' names are resolved at each attempt (tests: through a DNS server of their own) [the system's resolver]. */
  resolve?: ResolveName;
}

export class WebhookDispatcher {
  private readonly ctx: WorkerContext;
  private readonly outbox: OutboxRepository;
  private readonly policy: AddressPolicy;
  private readonly now: () => Date;
  private readonly resolve: ResolveName;
  private readonly o: Required<Pick<DispatcherOptions, 'pollMs' | 'concurrency' | 'purgeEveryMs'>>;
  private box: Promise<SecretBox> | null = null;
  private readonly running = new Set<Promise<void>>();
  private claiming = false;

  constructor(private readonly opts: DispatcherOptions) {
    this.ctx = new WorkerContext(opts.store, opts.log, () => void this.tick());
    this.outbox = new OutboxRepository(opts.store.db);
    this.policy = addressPolicy(opts.config.webhooks);
    this.now = opts.now ?? (() => new Date());
    this.resolve = opts.resolve ?? systemResolver;
    this.o = { pollMs: opts.pollMs ?? 250, concurrency: opts.concurrency ?? 8, purgeEveryMs: opts.purgeEveryMs ?? 3_600_000 };
  }

  /** Names it in `lease_owner` (host, pid, random), like a job worker. */
  get id(): string {
    return this.ctx.id;
  }

  start(): void {
    if (this.ctx.started) throw new Error('webhook dispatcher already started');
    this.ctx.started = true;
    this.ctx.every(this.o.pollMs, () => void this.tick());
    this.ctx.every(this.o.purgeEveryMs, () => void this.purge());
    void this.tick();
    void this.purge();
  }

  /** Claims nothing more and waits for the attempts under way (each ends within WEBHOOK_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.ctx.stopping = true;
    this.ctx.clearTimers();
    while (this.claiming || this.running.size) await Promise.allSettled([...this.running, new Promise((r) => setTimeout(r, 10))]);
  }

  /** Claims what is due, as many as there are free places, and sends each. */
  private async tick(): Promise<void> {
    const free = this.o.concurrency - this.running.size;
    if (!this.ctx.live || this.claiming || free <= 0) return;
    this.claiming = true;
    try {
      const now = this.now().getTime();
      // An attempt ends within the timeout; the lease outlasts it well, so no other sender takes it meanwhile.
      const leaseUntil = new Date(now + 2 * this.opts.config.webhooks.timeoutMs + 10_000).toISOString();
      const claimed = await this.outbox.claim(this.id, free, new Date(now).toISOString(), leaseUntil);
      if (!claimed.length) return;
      const targets = new Map((await this.outbox.targets([...new Set(claimed.map((m) => m.webhook_id))])).map((t) => [t.id, t]));
      for (const m of claimed) {
        const target = targets.get(m.webhook_id);
        if (!target) continue; // deleted meanwhile: its messages went with it
        const run = this.deliver(m, target).catch((err) => this.ctx.logError('deliver', err, 'recording a webhook delivery failed; the message is tried again when its lease runs out'));
        this.running.add(run);
        void run.finally(() => {
          this.running.delete(run);
          // A place is free, and the next message of the same object may be due now.
          void this.tick();
        });
      }
    } catch (err) {
      if (!this.ctx.stopping) this.ctx.logError('claim', err, 'claiming webhook messages failed; retrying at the next poll');
    } finally {
      this.claiming = false;
    }
  }

  /** One attempt of message `m` to its webhook, and its outcome, written while the claim still holds. */
  private async deliver(m: WebhookMessageRow, target: { url: string; secret: string }): Promise<void> {
    const started = this.now();
    const attempt = m.attempts + 1;
    const body = this.payload(m);
    const timestamp = Math.floor(started.getTime() / 1000);
    let result: { responseStatus: number | null; error: string | null };
    try {
      const secret = (await this.secrets()).open(target.secret);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'hostplane-webhooks/1',
        'webhook-id': m.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(secret, m.event_id, timestamp, body),
      };
      result = await send({ url: target.url, headers, body, policy: this.policy, timeoutMs: this.opts.config.webhooks.timeoutMs, resolve: this.resolve });
    } catch (err) {
      result = { responseStatus: null, error: `could not sign: ${(err as Error).message}` };
    }
    const delivered = result.error === null;
    const finished = this.now();
    const next = delivered ? null : nextAttemptAt(attempt, Date.parse(m.occurred_at), finished.getTime());
    const kept = await this.opts.store.db.transaction().execute((trx) =>
      new OutboxRepository(trx).finish(m, this.id, {
        attempt,
        delivered,
        responseStatus: result.responseStatus,
        error: result.error,
        attemptedAt: started.toISOString(),
        durationMs: Math.max(0, finished.getTime() - started.getTime()),
        nextAttemptAt: next === null ? null : new Date(next).toISOString(),
        failingReason: delivered || next !== null ? null : `${m.event} (${m.event_id}) of ${m.occurred_at} could not be delivered for 24 hours; the last attempt: ${result.error}`,
      }),
    );
    if (!kept) this.opts.log.warn({ message: m.id }, 'webhook message was taken by another sender (lease ran out) or removed; its outcome is theirs');
  }

  /** The body of a message: `{"type":…,"timestamp":…,"data":{…}}`, the data's links made absolute. */
  private payload(m: WebhookMessageRow): string {
    const data = JSON.parse(m.data) as { links?: Record<string, string | null> };
    if (data.links) {
      const base = this.opts.config.publicBaseUrl;
      data.links = Object.fromEntries(Object.entries(data.links).map(([k, v]) => [k, v === null ? null : base + v]));
    }
    return JSON.stringify({ type: m.event, timestamp: m.occurred_at, data });
  }

  /** The sealing keys, read once from the store on first need. */
  private secrets(): Promise<SecretBox> {
    if (!this.box) {
      this.box = new WebhooksRepository(this.opts.store.db).storeKey().then((key) => secretBox(this.opts.config.webhooks.secretKeys, key));
      // A failed read is tried again at the next delivery.
      this.box.catch(() => (this.box = null));
    }
    return this.box;
  }

  private async purge(): Promise<void> {
    try {
      const n = await this.outbox.purge(new Date(this.now().getTime() - DELIVERY_RETENTION_MS).toISOString());
      if (n.messages || n.deliveries) this.opts.log.info(n, 'purged webhook messages and attempts past retention');
    } catch (err) {
      if (!this.ctx.stopping) this.ctx.logError('purge', err, 'purging webhook messages failed');
    }
  }
}

/**
 * Starts the sender beside a job worker that runs the general queue (`serve`, `hostplane worker`);
 * returns its stop: `const stop = startWebhookDispatcher({ store, config, log }); … await stop()`.
 */
export function startWebhookDispatcher(o: DispatcherOptions): () => Promise<void> {
  const dispatcher = new WebhookDispatcher(o);
  dispatcher.start();
  return () => dispatcher.stop();
}
