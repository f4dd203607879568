// GET /internal/tls-allowed?domain=<host>: the `ask` of Caddy's on-demand TLS
// (docs/decisions/0008-web-servers.md, 0022-mail-records-and-discovery.md). Before Caddy gets a
// certificate for a host it asks here; 200 only for a host this service serves: a subdomain's
// site, or `autoconfig.<presence domain>` (API guide "Mail client set-up"). No token: Caddy
// sends none.
import type { FastifyInstance } from 'fastify';

/** Whether one kind of host is served here: `(host) => subdomains.servesHost(host)`. */
export type ServesHost = (host: string) => Promise<boolean>;

export function tlsAllowedRoute(app: FastifyInstance, serves: ServesHost[]): void {
  app.get('/internal/tls-allowed', { config: { infra: true }, schema: { hide: true } }, async (request, reply) => {
    const domain = (request.query as { domain?: unknown }).domain;
    let allowed = false;
    if (typeof domain === 'string') for (const s of serves) if (!allowed) allowed = await s(domain);
    return reply.code(allowed ? 200 : 404).type('text/plain').send(allowed ? 'ok\n' : 'not a site of this service\n');
  });
}
