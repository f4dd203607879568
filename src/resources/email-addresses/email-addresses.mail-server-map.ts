// The maps a mail server's rspamd polls from hostplane (decisions 0011, 0019; API guide "Sending
// mail"): not part of the API. The server authenticates with its name and report key (HTTP Basic),
// sees only what is its own, and is served by version (304 while it holds the current one; what it
// holds is recorded for the jobs that wait for it).
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import type { MailMap } from '../../provisioning/mail/map-versions.repository.js';
import { MailServersRepository, mailReportKey } from '../../provisioning/mail/servers.repository.js';
import type { VersionedMaps } from '../../provisioning/mail/versioned-map.js';

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Basic realm="hostplane mail servers"' };
const denied = () =>
  new AppError('unauthorized', 'Name a registered mail server and its report key as HTTP Basic credentials.', undefined, WWW_AUTHENTICATE);

/** The Basic credentials of a request: [user, password], or null. */
function basicCredentials(request: FastifyRequest): [string, string] | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.authorization ?? '');
  if (!m) return null;
  const plain = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = plain.indexOf(':');
  return colon < 0 ? null : [plain.slice(0, colon), plain.slice(colon + 1)];
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

/**
 * GET/HEAD `path`: `map` of the mail server the request's credentials name, its body as
 * `render(db, server)` makes it from the snapshot of its version:
 * `mailServerMap(app, store, maps, '/internal/rspamd-settings', 'settings', (db, server) => …)`.
 */
export function mailServerMap(
  app: FastifyInstance,
  store: Store,
  maps: VersionedMaps,
  path: string,
  map: MailMap,
  render: (db: Kysely<Database>, server: string) => Promise<string>,
): void {
  app.get(path, { config: { infra: true }, schema: { hide: true } }, async (request, reply) => {
    const credentials = basicCredentials(request);
    if (!credentials) throw denied();
    const [name, key] = credentials;
    const server = await new MailServersRepository(store.db).byName(name);
    if (!server || !crypto.timingSafeEqual(digest(mailReportKey(server.doveadm_key)), digest(key))) throw denied();
    return maps.serve(request, reply, { server: server.name, map, render: (db) => render(db, server.name) });
  });
}
