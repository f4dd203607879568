// The maps a mail server's rspamd polls from hostplane (decision 0011; API guide "Sending mail"): not
// part of the API. The server authenticates with its name and report key (HTTP Basic), sees only
// what is its own, and gets 304 while the ETag is unchanged.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../db/index.js';
import { AppError } from '../../errors.js';
import { MailServersRepository, mailReportKey } from '../../provisioning/mail/servers.repository.js';

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

/** Whether If-None-Match names `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
function noneMatch(header: string, etag: string): boolean {
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * GET/HEAD `path`: the map `body(server name)` makes, for the mail server named by the request's
 * credentials. `mailServerMap(app, store, '/internal/rspamd-settings', (server) => …)`.
 */
export function mailServerMap(app: FastifyInstance, store: Store, path: string, body: (server: string) => Promise<string>): void {
  /**
   * When each server's current body was first served here: its Last-Modified. A body first seen
   * after a change is never older than the change, so If-Modified-Since (for clients without
   * ETags) cannot hide one; after a restart the time is new, which only costs a full answer.
   */
  const firstServed = new Map<string, { etag: string; at: number }>();
  app.get(path, { config: { infra: true }, schema: { hide: true } }, async (request, reply: FastifyReply) => {
    const credentials = basicCredentials(request);
    if (!credentials) throw denied();
    const [name, key] = credentials;
    const server = await new MailServersRepository(store.db).byName(name);
    if (!server || !crypto.timingSafeEqual(digest(mailReportKey(server.doveadm_key)), digest(key))) throw denied();

    const text = await body(server.name);
    const etag = `"${crypto.createHash('sha256').update(text).digest('base64url').slice(0, 32)}"`;
    let seen = firstServed.get(server.name);
    if (seen?.etag !== etag) firstServed.set(server.name, (seen = { etag, at: Math.floor(Date.now() / 1000) * 1000 }));
    reply.header('ETag', etag).header('Last-Modified', new Date(seen.at).toUTCString()).header('Cache-Control', 'no-cache');

    // RFC 9110 §13.2.2: If-None-Match decides when present; If-Modified-Since only without it. A
    // date in the same second as Last-Modified does not count as "not modified": two bodies may
    // share that second.
    const inm = request.headers['if-none-match'];
    const ims = Date.parse(request.headers['if-modified-since'] ?? '');
    const notModified = inm !== undefined ? noneMatch(inm, etag) : Number.isFinite(ims) && ims >= seen.at + 1000;
    if (notModified) return reply.code(304).send();
    return reply.code(200).type('text/plain; charset=utf-8').send(text);
  });
}
