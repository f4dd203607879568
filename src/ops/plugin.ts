// Operational endpoints: OpenAPI 3.1 at /openapi.json generated from the route
// schemas, Swagger UI at /docs, the API guide at /docs/api-guide.md, /healthz, /readyz, Prometheus
// /metrics. They are open (no token, no Accept rules: `config.infra`) and exempt from the rate
// limit (src/limits/plugin.ts). What the document promises is derived from the registered routes
// (docs/decisions/0006-openapi.md).
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ping } from '../db/dialect.js';
import client from 'prom-client';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { ErrorDocument, addDocumentSchemas } from '../jsonapi/schema.js';

/** How long /readyz waits for `select 1` before it reports the database unavailable. */
export const READY_TIMEOUT_MS = 2000;

/**
 * Request and response bodies are JSON:API documents; plain JSON is accepted too (API guide
 * "Versioning and content types").
 */
const BODY_TYPES = ['application/vnd.api+json', 'application/json'];

/** The licence of package.json, in the form OpenAPI 3.1 takes (an SPDX identifier). */
const LICENSE = { name: 'MIT', identifier: 'MIT' };

/** The guide for API clients; from src/ops and dist/ops alike it is two levels up. */
const GUIDE_FILE = new URL('../../docs/api-guide.md', import.meta.url);
const GUIDE_PATH = '/docs/api-guide.md';

/**
 * The resource groups of the API, in the order the docs page lists them. A group whose routes are
 * not registered gets no tag and is named "not available yet" in the description, so the document
 * promises exactly what this server answers; a tag used by a route but missing here is still listed.
 */
const TAGS: { name: string; description: string }[] = [
  { name: 'customers', description: 'Customers and resellers: a reseller sees and manages its end customers.' },
  { name: 'domains', description: 'Domains: registration, DNS presence and its two flags.' },
  { name: 'packages', description: 'Hosting packages, with links to what is assigned to them.' },
  { name: 'plans', description: 'Plans: the limits and features of packages.' },
  { name: 'queue-jobs', description: 'Asynchronous changes: a write that answers 202 names its job; poll it until it is done.' },
  { name: 'dns-records', description: 'DNS records of your presence domains, served by the DNS servers once their job is done.' },
  { name: 'domain-availability', description: 'Whether domain names can be registered.' },
  { name: 'subdomains', description: 'Subdomains and their web server settings.' },
  { name: 'databases', description: 'Databases.' },
  { name: 'email-addresses', description: 'Mailboxes and forwarders.' },
  { name: 'ssh-keys', description: "SSH public keys a package's Linux user logs in with over SFTP (an addition to the original API)." },
  { name: 'webhooks', description: 'URLs that events (jobs done or failed, objects created, changed, deleted) are sent to, signed (an addition to the original API).' },
  { name: 'audit-events', description: 'The audit trail: every write and every refused authentication, who made it, from where, with which answer (an addition to the original API).' },
  { name: 'session', description: "The customer panel's login: a session cookie that stands for the contact's token, and two-factor login by TOTP (an addition to the original API)." },
];

interface OpenApiDoc {
  info: { description?: string };
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, { tags?: string[] }>>;
}

/** The tags the registered operations use. */
function usedTags(doc: OpenApiDoc): Set<string> {
  const used = new Set<string>();
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) for (const tag of op?.tags ?? []) used.add(tag);
  }
  return used;
}

/** What every client needs to know before the first call; the operations document the rest. */
function apiDescription(config: Config, available: string[], missing: string[], guide: string | null): string {
  const { max, windowMs } = config.rateLimit;
  return [
    'The Customer Hosting Management API: customers and resellers manage their hosting through a JSON:API.',
    `Available: ${available.join(', ')}.` +
      (missing.length ? ` Not available yet: ${missing.join(', ')}; their paths answer 404 until a later version adds them.` : ''),
    '',
    '- **Authentication**: `Authorization: token <API_TOKEN>`, or HTTP Basic with user `token` and the token as password. ' +
      'The customer panel logs in with `POST /session` and sends its session cookie instead, and `X-CSRF-Token` with every write.',
    `- **Version**: send \`Accept: application/vnd.${config.apiVendor}.v1+json\`; another version answers 406.`,
    '- **Bodies** are `application/vnd.api+json` (or `application/json`); unknown attributes are refused with 422, never dropped.',
    '- **Asynchronous writes** answer 202 with a queue-job; its URL is in `Content-Location`. Poll it until `status` is `done`.',
    `- **Rate limit**: at most ${max} requests per ${windowMs / 1000} s per client address; every API answer carries \`RateLimit-Limit\`, ` +
      '`RateLimit-Remaining` and `RateLimit-Reset`, a 429 carries `Retry-After`.',
    '- **Errors** are JSON:API error documents; match on `errors[].id`. Every answer carries an `x-request-id` to quote when you report a problem.',
    '- **Other methods** on a known path answer 405 with `Allow`; unknown paths answer 404.',
    ...(guide ? ['', `More, with examples for every endpoint, in the [API guide](${guide}).`] : []),
  ].join('\n');
}

/**
 * Keeps the tag list to the tags in use (no empty groups on the docs page), known ones first, and
 * names the known groups that have no routes yet in the description.
 */
function tidy(doc: OpenApiDoc, config: Config, guide: string | null): OpenApiDoc {
  const used = usedTags(doc);
  const known = TAGS.filter((t) => used.has(t.name));
  const extra = [...used].filter((name) => !known.some((t) => t.name === name)).sort().map((name) => ({ name, description: name }));
  const tags = [...known, ...extra];
  const missing = TAGS.filter((t) => !used.has(t.name)).map((t) => t.name);
  return { ...doc, info: { ...doc.info, description: apiDescription(config, tags.map((t) => t.name), missing, guide) }, tags };
}

export async function registerOps(app: FastifyInstance, opts: { config: Config; store: Store }) {
  const { config, store } = opts;
  const guide = fs.existsSync(GUIDE_FILE) ? fs.readFileSync(GUIDE_FILE, 'utf8') : null;
  const guideUrl = guide === null ? null : config.publicBaseUrl + GUIDE_PATH;
  // Routes of the docs page are operational: no negotiation, no authentication.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), infra: true };
  });
  // The one error document every operation's failures refer to (jsonapi/schema.ts `operation`).
  addDocumentSchemas(app, ErrorDocument);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'hostplane — Customer Hosting Management API', version: '1', license: LICENSE },
      ...(guideUrl ? { externalDocs: { description: 'API guide', url: guideUrl } } : {}),
      servers: [{ url: config.publicBaseUrl, description: 'this server (its PUBLIC_BASE_URL)' }],
      components: {
        securitySchemes: {
          token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <API_TOKEN>' },
          basic: { type: 'http', scheme: 'basic', description: 'user "token", password the API token' },
          session: { type: 'apiKey', in: 'cookie', name: 'hostplane_session', description: 'the customer panel\'s session (POST /session); writes also send X-CSRF-Token' },
        },
      },
      security: [{ token: [] }, { basic: [] }, { session: [] }],
    },
    // Only routes that carry a tag are API operations; operational routes stay out.
    hideUntagged: true,
    // Shared schemas (documents, the error document) become components named by their $id.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    // Bodies (requests and responses) are listed under the JSON:API type first, as clients should
    // send them; the default would be application/json only.
    transform: ({ schema, url }) => ({
      schema: { ...schema, consumes: schema?.consumes ?? BODY_TYPES, produces: schema?.produces ?? BODY_TYPES },
      url,
    }),
    transformObject: (o) => tidy(('openapiObject' in o ? o.openapiObject : o.swaggerObject) as unknown as OpenApiDoc, config, guideUrl) as never,
  });
  // The page loads only its own assets and ./json (validatorUrl stays null: no third-party calls),
  // so it works offline and behind a strict egress policy.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    theme: { title: 'hostplane API' },
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });

  // The guide the document links to, served as it ships, so the link works for every deployment.
  if (guide !== null) {
    app.get(GUIDE_PATH, { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
      reply.type('text/plain; charset=utf-8');
      return guide;
    });
  }

  // Serialised once: every answer shares one string instead of building ~90 kB per request.
  let openapi: string | undefined;
  app.get('/openapi.json', { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/json; charset=utf-8');
    return (openapi ??= JSON.stringify(app.swagger()));
  });

  app.get('/healthz', { config: { infra: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { infra: true }, schema: { hide: true } }, async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // A database host that drops packets would leave the probe hanging (pg has no connect
      // timeout by default); a probe must answer, so it gives up after READY_TIMEOUT_MS.
      await Promise.race([
        ping(store.db),
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
  // The series of each method, route and status, looked up once: prom-client would hash the label
  // values on every observation. Callback style: it never waits (src/jsonapi/plugin.ts says why).
  const series = new Map<string, client.Histogram.Internal<'method' | 'route' | 'status'>>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let s = series.get(key);
    if (!s) series.set(key, (s = duration.labels({ method: request.method, route, status: String(reply.statusCode) })));
    s.observe(reply.elapsedTime / 1000);
    done();
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
