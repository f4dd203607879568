// Applies the limiter to every request, known route or not (one budget per client across all
// routes, 404s and 401s included), before authentication. Operational endpoints are exempt so
// health checks and scrapes never eat a client's budget (docs/decisions/0002-rate-limiting.md).
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { LinkBuilder } from '../jsonapi/document.js';
import { clientKey, type Limiter } from './limiter.js';

export type { Limiter } from './limiter.js';

const EXEMPT = /^\/(healthz|readyz|metrics)(\?|$)|^\/docs\/static\//;

declare module 'fastify' {
  interface FastifyRequest {
    limitedAs: string | null;
  }
}

export function registerLimits(app: FastifyInstance, opts: { limiter: Limiter; links: LinkBuilder }) {
  const { limiter } = opts;
  app.decorateRequest('limitedAs', null);

  app.addHook('onRequest', async (request, reply) => {
    if (EXEMPT.test(request.url)) return;
    const client = clientKey(request.ip);
    request.limitedAs = client;
    const d = await limiter.hit(client);
    const resetS = Math.ceil(d.resetMs / 1000);
    reply.header('RateLimit-Limit', String(d.limit));
    reply.header('RateLimit-Remaining', String(d.remaining));
    reply.header('RateLimit-Reset', String(resetS));
    if (d.allowed) return;
    const retry = { 'Retry-After': String(Math.max(1, resetS)) };
    if (d.blocked) {
      throw new AppError('too_many_errors', 'Too many failed requests; API access is blocked for a while (spec §7.2).', undefined, retry);
    }
    throw new AppError('rate_limited', `At most ${d.limit} requests per window are allowed (spec §8).`, undefined, retry);
  });

  // Error responses other than 429 count towards a temporary block (spec §7.2).
  app.addHook('onResponse', async (request, reply) => {
    if (request.limitedAs && reply.statusCode >= 400 && reply.statusCode !== 429) {
      await limiter.recordError(request.limitedAs);
    }
  });
}
