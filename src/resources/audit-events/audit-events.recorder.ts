// Records the audit trail as the API answers (API guide "Audit events"; docs/decisions/
// 0029-audit-trail.md): every write to an API route whatever its answer, and every refused
// authentication, one row each, stored before the answer leaves (onSend), so an answer a client
// has received always has its event. Bodies are never read: no password or secret of a body can
// reach the trail.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import type { NewAuditEvent } from './audit-events.repository.js';
import { eventPath, idempotencyKeyOf, recorded } from './audit-events.rules.js';
import { AuditEventsService } from './audit-events.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The job a 202 answer carries (src/resources/accepted.ts sets it): the event's queue_job_id, without reading the body back. */
    queueJobId: number | null;
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

/**
 * Adds the recording hook (unless AUDIT_LOG=off) and the request decoration it reads; register it
 * after authentication: `registerAuditTrail(app, { store, config })`.
 */
export function registerAuditTrail(app: FastifyInstance, o: { store: Store; config: Pick<Config, 'audit'> }): void {
  app.decorateRequest('queueJobId', null);
  if (!o.config.audit.enabled) return;
  const service = new AuditEventsService(o);
  const retentionMs = o.config.audit.retentionDays * DAY_MS;
  const failures = new client.Counter({
    name: 'hostplane_audit_events_lost_total',
    help: 'Audit events that could not be stored (each is logged at error level with its fields)',
    registers: app.hasDecorator('metrics') ? [app.metrics] : [],
  });
  // Callback style: a read that is not recorded passes without a promise (src/jsonapi/plugin.ts says why).
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions;
    if (!route.url || route.config?.infra || !recorded(request.method, reply.statusCode)) return done(null, payload);
    const event = eventOf(request, reply, retentionMs);
    service.record(event).then(
      () => done(null, payload),
      (err: unknown) => {
        // The change (if any) is made and the answer must tell the truth about it: it goes out, and
        // the event lives on in the log and the metric, for the operator to act on.
        failures.inc();
        request.log.error({ err, auditEvent: event }, 'audit event not stored');
        done(null, payload);
      },
    );
  });
}
