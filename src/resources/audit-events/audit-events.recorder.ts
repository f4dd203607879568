// Records the audit trail as the API answers (API guide "Audit events"; docs/decisions/
// 0029-audit-trail.md): every write to an API route whatever its answer, and every refused
// authentication, one row each. The answer does not wait: its event joins a batch that is written
// in one statement within 50 ms (src/db/write-batches.ts); a batch
// the store refuses is logged at error level event by event and counted; closing the app writes
// what is waiting. Bodies are never read: no password or secret of a body can reach the trail.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import type { NewAuditEvent } from './audit-events.repository.js';
import { eventPath, idempotencyKeyOf, recorded } from './audit-events.rules.js';
import { AuditEventsService } from './audit-events.service.js';
import { WriteBatches } from '../../db/write-batches.js';

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

/**
 * What an answer's event is made of, as the request had it: copied as it answers, made into the
 * event (eventOf) in the batch, where the formatting runs many events at once and not on the way
 * of the answer.
 */
interface Seen {
  at: number;
  actor: FastifyRequest['actor'];
  ip: string;
  method: string;
  url: string;
  status: number;
  requestId: string;
  queueJobId: number | null;
  key: string | string[] | undefined;
  log: FastifyBaseLogger;
}

const seenOf = (request: FastifyRequest, reply: FastifyReply): Seen => ({
  at: Date.now(),
  actor: request.actor,
  ip: request.ip,
  method: request.method,
  url: request.url,
  status: reply.statusCode,
  requestId: request.id,
  queueJobId: request.queueJobId,
  key: request.headers['idempotency-key'],
  log: request.log,
});

/** The event of an answer: who (never the token, only its id), from where, what, with which answer. */
function eventOf(s: Seen, retentionMs: number): NewAuditEvent {
  return {
    created_at: new Date(s.at).toISOString(),
    expires_at: new Date(s.at + retentionMs).toISOString(),
    customer_id: s.actor?.customerId ?? null,
    contact_id: s.actor?.contactId ?? null,
    token_id: s.actor?.tokenId ?? null,
    client_ip: s.ip,
    method: s.method,
    path: eventPath(s.url),
    status: s.status,
    request_id: s.requestId,
    queue_job_id: s.queueJobId,
    idempotency_key: idempotencyKeyOf(s.key),
  };
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
  const service = new AuditEventsService(o);
  const retentionMs = o.config.audit.retentionDays * DAY_MS;
  // A refused batch: its events' fields hold no secret, logged whole so that an operator can restore them.
  const batches = new WriteBatches<Seen>(
    (batch) => service.record(batch.map((s) => eventOf(s, retentionMs))),
    (batch, err) => {
      lost.inc(batch.length);
      for (const s of batch) s.log.error({ err, auditEvent: eventOf(s, retentionMs) }, 'audit event not stored');
    },
  );
  app.decorate('auditTrail', { settled: () => batches.settled() });
  // Before the store closes (serve closes the app first): the last answers' events are written.
  app.addHook('onClose', (_app, done) => void batches.settled().then(() => done()));
  // Callback style, never waiting (src/jsonapi/plugin.ts says why).
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions;
    if (route.url && !route.config?.infra && recorded(request.method, reply.statusCode)) batches.add(seenOf(request, reply));
    done(null, payload);
  });
}
