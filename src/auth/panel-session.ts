// The customer panel's session cookie (API guide "Panel sessions (extension)";
// docs/decisions/0030-panel-sessions.md): what the cookie is, how a request carrying it becomes the
// contact's Actor, and the anti-CSRF token its writes must send. The store is the truth: every
// request reads the session, so a logout, a new portal password or a deleted contact ends it on
// every instance at once.
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Actor } from './actor.js';
import type { AuthRepository, SessionOwner } from './auth.repository.js';
import { hashToken } from './tokens.js';

export const SESSION_COOKIE = 'hostplane_session';
export const CSRF_HEADER = 'x-csrf-token';
const COOKIE_ATTRIBUTES = 'Path=/; HttpOnly; SameSite=Strict';
const MINUTE_MS = 60_000;

/** A new cookie value: 32 random bytes, base64url. */
export const newSessionCookie = (): string => crypto.randomBytes(32).toString('base64url');

/** Only the SHA-256 of the cookie is stored: a copy of the store opens no session. */
export const sessionHash = (cookie: string): string => hashToken(cookie);

/**
 * The session's anti-CSRF token, derived from the cookie (HMAC), so nothing more is stored and
 * the token cannot be computed without the HttpOnly cookie that scripts of another site never see.
 */
export const csrfTokenOf = (cookie: string): string => crypto.createHmac('sha256', cookie).update('hostplane csrf').digest('base64url');

/** `Set-Cookie` of a new session; `Secure` when the request came over TLS (behind a trusted proxy: its X-Forwarded-Proto). */
export const sessionSetCookie = (cookie: string, secure: boolean): string => `${SESSION_COOKIE}=${cookie}; ${COOKIE_ATTRIBUTES}${secure ? '; Secure' : ''}`;

/** `Set-Cookie` that makes the browser forget the session. */
export const CLEAR_SESSION_COOKIE = `${SESSION_COOKIE}=; ${COOKIE_ATTRIBUTES}; Max-Age=0`;

/** The session cookie's value in a Cookie header, else undefined (only a value of the form we make counts). */
export function sessionCookieOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/**
 * 401 `unauthorized` of the panel: its challenge names the cookie, not Basic, so a browser shows no
 * password dialog of its own; and it tells the browser to forget a cookie that no longer works.
 */
export const sessionUnauthorized = (detail: string, clear: boolean): AppError =>
  new AppError('unauthorized', detail, undefined, { ...PANEL_CHALLENGE, ...(clear ? { 'Set-Cookie': CLEAR_SESSION_COOKIE } : {}) });

/** The challenge of the panel's 401 answers (a refused login too). */
export const PANEL_CHALLENGE = { 'WWW-Authenticate': `Cookie realm="panel", cookie-name="${SESSION_COOKIE}"` };

/** A session that authenticates the request, as the routes of /session show it. */
export interface PanelSession {
  id: number;
  cookie: string;
  contactId: number;
  customerId: number;
  isReseller: boolean;
  name: string;
  email: string;
  totpEnabled: boolean;
  idleTimeoutS: number;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Resolves a request carrying the session cookie (and no Authorization header): the contact's Actor,
 * exactly as its token would give (no scope), or 401 for a session that is unknown or has ended;
 * 403 `csrf_token_invalid` for a write without the session's X-CSRF-Token.
 * `const resolve = sessionResolver(new AuthRepository(db), (err) => log.warn({ err })); const { actor, session } = await resolve(cookie, request)`.
 */
export function sessionResolver(repo: AuthRepository, onTouchError: (err: unknown) => void) {
  return async function resolveSession(cookie: string, request: FastifyRequest): Promise<{ actor: Actor; session: PanelSession }> {
    const row = await repo.sessionOwner(sessionHash(cookie));
    const now = Date.now();
    if (!row || ended(row, now)) throw sessionUnauthorized('The panel session has ended or does not exist; log in again with POST /session.', true);
    // Noted at most once a minute, judged from the row itself: no process memory another instance lacks.
    const last = Date.parse(row.last_used_at);
    if (now - last >= MINUTE_MS) {
      await repo.touchSession(row.sessionId, new Date(now).toISOString(), new Date(now - MINUTE_MS).toISOString()).catch(onTouchError);
    }
    if (WRITES.has(request.method) && !csrfHeaderMatches(request.headers[CSRF_HEADER], cookie)) {
      throw new AppError('csrf_token_invalid', 'A write with the panel session cookie needs the header X-CSRF-Token with the csrf_token of GET /session.', { header: 'X-CSRF-Token' });
    }
    const actor: Actor = { customerId: row.customerId, isReseller: row.is_reseller === 1, contactId: row.contactId, tokenId: null };
    const session: PanelSession = {
      id: row.sessionId, cookie, contactId: row.contactId, customerId: row.customerId, isReseller: row.is_reseller === 1, name: row.name, email: row.email,
      totpEnabled: row.totp_enabled === 1, idleTimeoutS: row.idle_timeout_s,
    };
    return { actor, session };
  };
}

/** Past its hard end, idle too long, or its customer's login was disabled since. */
function ended(row: SessionOwner, now: number): boolean {
  return row.is_login_disabled === 1 || Date.parse(row.expires_at) <= now || Date.parse(row.last_used_at) + row.idle_timeout_s * 1000 <= now;
}

function csrfHeaderMatches(given: string | string[] | undefined, cookie: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(csrfTokenOf(cookie));
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
