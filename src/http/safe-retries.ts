// Safe retries on every write route of the API (API guide "Safe retries";
// docs/decisions/0026-safe-retries.md): each POST, PATCH and DELETE gets the Idempotency-Key hooks,
// and those whose object has no ETag of their own decide If-Match and If-None-Match here. The hooks
// are added to the write routes only (as each is registered), so reads run no hook for this at all.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { conditionsOf, evaluate, preconditionFailed } from '../jsonapi/conditional.js';
import { idempotencyHooks } from './idempotency.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Idempotency-Key answers not yet stored: `await app.idempotencyKeys.settled()` once they are. */
    idempotencyKeys: { settled(): Promise<void> };
  }
}

const WRITES = new Set(['POST', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the answer holds a secret or opens a session, so no Idempotency-Key may keep it (the panel's /session routes). */
    idempotent?: false;
  }
}

/** A route option that holds one hook, several or none, as a list. */
const hooks = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);

/**
 * If-Match and If-None-Match on a write without an entity tag of its own (a POST, a sub-resource):
 * the target exists and has no tag, so If-Match naming tags and If-None-Match `*` never hold (412).
 */
function untaggedConditions(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
  try {
    const c = conditionsOf(request);
    done(c && evaluate(c, null, false) === 'failed' ? preconditionFailed() : undefined);
  } catch (err) {
    done(err as Error);
  }
}

/** Call before the routes are registered: `registerSafeRetries(app, { store, config })`. */
export function registerSafeRetries(app: FastifyInstance, deps: { store: Store; config: Config }) {
  app.decorateRequest('idempotencyClaim', null);
  const idempotency = idempotencyHooks(deps.store, { ttlMs: deps.config.idempotencyKeyTtlMs, log: app.log });
  app.decorate('idempotencyKeys', { settled: idempotency.settled });
  // Before the store closes (serve closes the app first): the last answers are stored, the key locks' connections closed.
  app.addHook('onClose', (_app, done) => void idempotency.close().then(() => done()));
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.infra || ![route.method].flat().some((m) => WRITES.has(m))) return;
    if (route.config?.idempotent !== false) {
      // A key sent with an API token is read (on PostgreSQL locked) in the statement that checks the token.
      if (!route.config?.tokenRead) route.config = { ...route.config, tokenRead: idempotency.tokenClaim };
      route.preValidation = [...hooks(route.preValidation), idempotency.preValidation];
      route.onSend = [...hooks(route.onSend), idempotency.onSend] as RouteOptions['onSend'];
    }
    if (!route.config?.conditional) route.preHandler = [...hooks(route.preHandler), untaggedConditions];
  });
}
