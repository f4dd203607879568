// Applies the limiter to every request, known route or not (one budget per client across all
// routes, 404s and 401s included), before authentication. Operational endpoints are exempt so
// health checks and scrapes never eat a client's budget (docs/decisions/0002-rate-limiting.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import { AppError } from '../errors.js';
import type { LinkBuilder } from '../jsonapi/document.js';
import { clientKey, type Limiter } from './limiter.js';

export type { Limiter } from './limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    limitedAs: string | null;
  }
}

export function registerLimits(app: FastifyInstance, opts: { limiter: Limiter; links: LinkBuilder }) {
  const { limiter } = opts;
  app.decorateRequest('limitedAs', null);
  watchFallback(app, limiter);

  app.addHook('onRequest', async (request, reply) => {
    const refused = await decide(limiter, request, reply);
    if (refused) throw refused;
  });

  // Error responses other than 429 count towards a temporary block (API guide "Rate limits and
  // blocking").
  // Callback style: only an error response waits for the limiter (src/jsonapi/plugin.ts says why).
  app.addHook('onResponse', (request, reply, done) => {
    if (request.limitedAs && reply.statusCode >= 400 && reply.statusCode !== 429) {
      limiter.recordError(request.limitedAs).then(() => done(), done);
      return;
    }
    done();
  });
}

/**
 * Takes one request from the client's budget and sets the RateLimit headers; returns the 429 to
 * answer when the client is over its budget or blocked, else null (and remembers the client on
 * the request, so its error response can be counted).
 */
async function decide(limiter: Limiter, request: FastifyRequest, reply: FastifyReply): Promise<AppError | null> {
  // Exempt: reads of the operational routes (health, metrics, OpenAPI, docs), decided by the
  // matched route, not by a URL prefix, so /docs/unknown or POST /healthz still count.
  if (request.routeOptions?.config?.infra && (request.method === 'GET' || request.method === 'HEAD')) return null;
  const client = clientKey(request.ip);
  request.limitedAs = client;
  const d = await limiter.hit(client);
  const resetS = Math.ceil(d.resetMs / 1000);
  reply.header('RateLimit-Limit', String(d.limit));
  reply.header('RateLimit-Remaining', String(d.remaining));
  reply.header('RateLimit-Reset', String(resetS));
  if (d.allowed) return null;
  request.limitedAs = null; // a 429 is not an error that counts towards a block
  const retry = { 'Retry-After': String(Math.max(1, resetS)) };
  if (d.blocked) {
    return new AppError('too_many_errors', 'Too many failed requests; API access is blocked for a while.', undefined, retry);
  }
  return new AppError('rate_limited', `At most ${d.limit} requests per window are allowed.`, undefined, retry);
}

/**
 * For errors answered outside the hook chain — the router's own errors (malformed URL, over-long
 * path segment), which Fastify hands to `frameworkErrors` without running any hook: takes the
 * request from the client's budget like any other and counts the error. Returns what to send:
 * the 429 when the client is over its budget, else `error`. Never rejects.
 * `frameworkErrors: (e, req, reply) => void limitRouterError(limiter, req, reply, appError).then((err) => sendErrors(req, reply, links, [err]))`
 */
export async function limitRouterError(limiter: Limiter, request: FastifyRequest, reply: FastifyReply, error: AppError): Promise<AppError> {
  try {
    const refused = await decide(limiter, request, reply);
    if (refused) return refused;
    if (request.limitedAs && error.status >= 400) await limiter.recordError(request.limitedAs);
  } catch {
    // limiters do not throw (the shared one falls back); if one ever does, the error still goes out
  }
  return error;
}

/** How often, at most, a shared-store outage is logged again while it lasts. */
const FALLBACK_LOG_INTERVAL_MS = 60_000;

/**
 * A shared limiter that falls back to per-instance memory (Redis down, docs/decisions/0002) is
 * counted in `hostplane_rate_limit_fallback_total` and logged as a warning: the first time, then
 * at most once a minute with the number of fallbacks since, so an outage does not flood the log.
 */
function watchFallback(app: FastifyInstance, limiter: Limiter) {
  if (!limiter.onFallback) return;
  const registry = app.hasDecorator('metrics') ? (app as { metrics?: client.Registry }).metrics : undefined;
  const counter = new client.Counter({
    name: 'hostplane_rate_limit_fallback_total',
    help: 'Rate-limit decisions taken by the in-process fallback because the shared store failed',
    registers: registry ? [registry] : [],
  });
  let lastLog = 0;
  let since = 0;
  limiter.onFallback((err) => {
    counter.inc();
    since++;
    const now = Date.now();
    if (now - lastLog < FALLBACK_LOG_INTERVAL_MS) return;
    app.log.warn({ fallbacks: since, reason: err.message }, 'rate-limit store unavailable; limiting per instance in memory');
    lastLog = now;
    since = 0;
  });
}
