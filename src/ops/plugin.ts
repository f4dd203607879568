// Operational endpoints (issue 2 item 7): OpenAPI 3.1 at /openapi.json generated from the route
// schemas, Swagger UI at /docs, /healthz, /readyz, Prometheus /metrics. They are open (no token,
// no Accept rules: `config.infra`) and exempt from the rate limit (src/limits/plugin.ts).
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { sql } from 'kysely';
import client from 'prom-client';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { ErrorDocument, SuccessDocument } from '../jsonapi/schema.js';

/** How long /readyz waits for `select 1` before it reports the database unavailable. */
export const READY_TIMEOUT_MS = 2000;

/** Request and response bodies are JSON:API documents; plain JSON is accepted too (spec §5.7). */
const BODY_TYPES = ['application/vnd.api+json', 'application/json'];

/** Descriptions of the resource groups; a tag used by a route but missing here is still listed. */
const TAGS: { name: string; description: string }[] = [
  { name: 'customers', description: 'Customers and resellers (spec §2.2, §4.2).' },
  { name: 'domains', description: 'Domains: registration and presence (spec §2.3).' },
  { name: 'packages', description: 'Hosting packages (spec §2.4).' },
  { name: 'plans', description: 'Plans: limits and features of packages (spec §2.5).' },
  { name: 'queue-jobs', description: 'Asynchronous operations and their status (spec §2.1, §3.1).' },
  { name: 'domain-availability', description: 'Whether domain names can be registered (spec §2.11, §4.3.7).' },
  { name: 'dns-records', description: 'DNS records of a domain (spec §2.6).' },
  { name: 'subdomains', description: 'Subdomains (spec §2.7).' },
  { name: 'databases', description: 'Databases (spec §2.8).' },
  { name: 'email-addresses', description: 'Mailboxes and forwarders (spec §2.9).' },
];

interface OpenApiDoc {
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, { tags?: string[] }>>;
}

/** Keeps the tag list to the tags in use (no empty groups on the docs page), known ones first. */
function tidyTags(doc: OpenApiDoc): OpenApiDoc {
  const used = new Set<string>();
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) for (const tag of op?.tags ?? []) used.add(tag);
  }
  const known = (doc.tags ?? []).filter((t) => used.has(t.name));
  const extra = [...used].filter((name) => !known.some((t) => t.name === name)).sort().map((name) => ({ name }));
  return { ...doc, tags: [...known, ...extra] };
}

export async function registerOps(app: FastifyInstance, opts: { config: Config; store: Store }) {
  const { config, store } = opts;
  // Routes of the docs page are operational: no negotiation, no authentication.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), infra: true };
    // Every API operation documents what a client gets back: its JSON:API document, or an
    // error document (API-NOTES §1.12, §3) for 4xx/5xx.
    else if (route.schema && !route.config?.infra && !route.schema.response) {
      route.schema = { ...route.schema, response: { '2XX': SuccessDocument, '4XX': ErrorDocument, '5XX': ErrorDocument } };
    }
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
      tags: TAGS,
    },
    // Only routes that carry a tag are API operations; operational routes stay out.
    hideUntagged: true,
    // Bodies (requests, and responses where a route documents one) are listed under the JSON:API
    // type first, as clients should send them; the default would be application/json only.
    transform: ({ schema, url }) => ({
      schema: { ...schema, consumes: schema?.consumes ?? BODY_TYPES, produces: schema?.produces ?? BODY_TYPES },
      url,
    }),
    transformObject: (o) => tidyTags(('openapiObject' in o ? o.openapiObject : o.swaggerObject) as OpenApiDoc) as never,
  });
  // The page loads only its own assets and ./json (validatorUrl stays null: no third-party calls),
  // so it works offline and behind a strict egress policy.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    theme: { title: 'hostplane API' },
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });

  app.get('/openapi.json', { config: { infra: true }, schema: { hide: true } }, async () => app.swagger());

  app.get('/healthz', { config: { infra: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // A database host that drops packets would leave the probe hanging (pg has no connect
      // timeout by default); a probe must answer, so it gives up after READY_TIMEOUT_MS.
      await Promise.race([
        sql`select 1`.execute(store.db),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
      return { status: 'ready', database: store.engine };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: store.engine });
    } finally {
      clearTimeout(timer);
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
