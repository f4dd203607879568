// Operational endpoints: OpenAPI at /openapi.json, docs at /docs, /healthz, /readyz, /metrics.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { sql } from 'kysely';
import client from 'prom-client';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';

export async function registerOps(app: FastifyInstance, opts: { config: Config; store: Store }) {
  const { config, store } = opts;
  // Routes of the docs page are operational: no negotiation, no authentication.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), infra: true };
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hostplane — Customer Hosting Management API',
        version: '1',
        description:
          'JSON:API-style API for DNS records, subdomains, databases, mailboxes and domain checks. ' +
          `Authenticate with \`Authorization: token <API_TOKEN>\`. Select the version with \`Accept: application/vnd.${config.apiVendor}.v1+json\`.`,
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <API_TOKEN>' },
          basic: { type: 'http', scheme: 'basic', description: 'user "token", password the API token' },
        },
      },
      security: [{ token: [] }, { basic: [] }],
    },
    hideUntagged: true,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  app.get('/openapi.json', { config: { infra: true }, schema: { hide: true } }, async () => app.swagger());

  app.get('/healthz', { config: { infra: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
    try {
      await sql`select 1`.execute(store.db);
      return { status: 'ready', database: store.engine };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: store.engine });
    }
  });

  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'hostplane_' });
  const duration = new client.Histogram({
    name: 'hostplane_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  app.decorate('metrics', registry);
  app.get('/metrics', { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: client.Registry;
  }
}
