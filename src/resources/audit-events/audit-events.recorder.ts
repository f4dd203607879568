// Records the audit trail as the API answers (API guide "Audit events"; docs/decisions/
// 0029-audit-trail.md): every write to an API route whatever its answer, and every refused
// authentication, one row each. The answer does not wait: its event joins a batch that is written
// in one statement within FLUSH_MS (at once while a batch is being written, under load); a batch
// the store refuses is logged at error level event by event and counted; closing the app writes
// what is waiting. Bodies are never read: no password or secret of a body can reach the trail.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import type { NewAuditEvent } from './audit-events.repository.js';
import { eventPath, idempotencyKeyOf, recorded } from './audit-events.rules.js';
import { AuditEventsService } from './audit-events.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The job a 202 answer carries (src/resources/accepted.ts sets it, a replay of an Idempotency-Key too): the event's queue_job_id, without reading the body back. */
    queueJobId: number | null;
  }
  interface FastifyInstance {
    /** The audit trail's events not yet written: `await app.auditTrail.settled()` once they are. */
    auditTrail: { settled(): Promise<void> };
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The event of an answer: who (never the token, only its id), from where, what, with which answer. */
function eventOf(request: FastifyRequest, reply: FastifyReply, retentionMs: number): NewAuditEvent {
  const now = Date.now();
  const actor = request.actor;
  return {
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + retentionMs).toISOString(),
    customer_id: actor?.customerId ?? null,
    contact_id: actor?.contactId ?? null,
    token_id: actor?.tokenId ?? null,
    client_ip: request.ip,
    method: request.method,
    path: eventPath(request.url),
    status: reply.statusCode,
    request_id: request.id,
    queue_job_id: request.queueJobId,
    idempotency_key: idempotencyKeyOf(request.headers['idempotency-key']),
  };
}

/** How long an event waits for others to be written with (when no batch is being written). */
export const FLUSH_MS = 10;
/** Events per statement, at most. */
const MAX_BATCH = 500;
/** Events waiting, at most: past that (the store is down) an event is logged and counted at once. */
const MAX_WAITING = 10_000;

interface Waiting {
  event: NewAuditEvent;
  log: FastifyBaseLogger;
}

/** The events waiting to be written, and the batch being written. */
class Batches {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly service: AuditEventsService,
    private readonly lost: client.Counter,
  ) {}

  add(event: NewAuditEvent, log: FastifyBaseLogger): void {
    if (this.waiting.length >= MAX_WAITING) return this.fail([{ event, log }], new Error(`${MAX_WAITING} audit events are waiting for the store already`));
    this.waiting.push({ event, log });
    if (this.waiting.length >= MAX_BATCH) this.start();
    else this.timer ??= setTimeout(() => ((this.timer = null), this.start()), FLUSH_MS);
  }

  /** Resolves once every event added so far is written (or logged as lost). */
  async settled(): Promise<void> {
    while (this.waiting.length || this.writing) {
      this.start();
      await this.writing;
    }
  }

  private start(): void {
    if (this.writing || !this.waiting.length) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.writing = this.drain().finally(() => {
      this.writing = null;
      // Added while the last statement ran, after the loop looked: written now.
      this.start();
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      await this.service.record(batch.map((w) => w.event)).catch((err: unknown) => this.fail(batch, err));
    }
  }

  /** The events' fields hold no secret: logged whole, so that an operator can restore them. */
  private fail(batch: Waiting[], err: unknown): void {
    this.lost.inc(batch.length);
    for (const { event, log } of batch) log.error({ err, auditEvent: event }, 'audit event not stored');
  }
}

/**
 * Adds the recording hook (unless AUDIT_LOG=off), the request decoration it reads and
 * `app.auditTrail`; register it after authentication: `registerAuditTrail(app, { store, config })`.
 */
export function registerAuditTrail(app: FastifyInstance, o: { store: Store; config: Pick<Config, 'audit'> }): void {
  app.decorateRequest('queueJobId', null);
  if (!o.config.audit.enabled) {
    app.decorate('auditTrail', { settled: () => Promise.resolve() });
    return;
  }
  const lost = new client.Counter({
    name: 'hostplane_audit_events_lost_total',
    help: 'Audit events that could not be stored (each is logged at error level with its fields)',
    registers: app.hasDecorator('metrics') ? [app.metrics] : [],
  });
  const batches = new Batches(new AuditEventsService(o), lost);
  const retentionMs = o.config.audit.retentionDays * DAY_MS;
  app.decorate('auditTrail', { settled: () => batches.settled() });
  // Before the store closes (serve closes the app first): the last answers' events are written.
  app.addHook('onClose', (_app, done) => void batches.settled().then(() => done()));
  // Callback style, never waiting (src/jsonapi/plugin.ts says why).
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions;
    if (route.url && !route.config?.infra && recorded(request.method, reply.statusCode)) batches.add(eventOf(request, reply, retentionMs), request.log);
    done(null, payload);
  });
}
