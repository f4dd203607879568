// Authenticates every API route before its body is read (spec §5); routes opt into the legacy
// reseller password with `config: { auth: 'token-or-legacy' }`.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { actorResolver, type Actor, type AuthMode } from './actor.js';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

export function registerAuth(app: FastifyInstance, db: Kysely<Database>) {
  app.decorateRequest('actor', null);
  const resolveActor = actorResolver(db);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    // Unknown paths answer 404 without authentication; operational routes are open.
    if (config?.infra || !request.routeOptions.url) return;
    request.actor = await resolveActor(request.headers.authorization, config?.auth ?? 'token');
  });
}

/** The authenticated caller of an API route (the hook guarantees it is set). */
export function actorOf(request: { actor: Actor | null }): Actor {
  if (!request.actor) throw new Error('route without authentication');
  return request.actor;
}
