// Who is calling (API guide "Authentication"): resolves the Authorization header to an Actor.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors.js';
import { hashToken } from './tokens.js';
import crypto from 'node:crypto';
import { hashLegacyPassword, verifyLegacyPassword } from './legacy-password.js';
import { AuthRepository, type OwnerColumns, type TokenLimits } from './auth.repository.js';
import { parseNumericId } from '../db/ids.js';
import { scopeOf, type TokenScope } from './token-scope.js';
import { addressIn, parseCidr, type Cidr } from './cidr.js';

export interface Actor {
  customerId: number;
  isReseller: boolean;
  /** null for a reseller authenticated with its legacy password. */
  contactId: number | null;
  /** The API token the request carried (its row id, never the token); null for the legacy password and operator commands. */
  tokenId: number | null;
  /** What the token is limited to (API guide "Scoped tokens"); absent when it is not limited. */
  scope?: TokenScope;
}

/**
 * How a route authenticates: `token` (or the panel's session cookie, as every route), `token-or-legacy`
 * (also the reseller's legacy password), `session` (the panel's own routes: a missing cookie answers
 * the panel's 401), `none` (the panel's login, which has no session yet).
 */
export type AuthMode = 'token' | 'token-or-legacy' | 'session' | 'none';

export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Basic realm="API"' };
const unauthorized = (detail: string) => new AppError('unauthorized', detail, undefined, WWW_AUTHENTICATE);

interface Credentials {
  token?: string;
  legacy?: { customerNumber: string; password: string };
}

/** The API token an Authorization header carries (`token <T>` or Basic `token:<T>`), else undefined. */
export const tokenOf = (header: string | undefined): string | undefined => parseAuthorization(header)?.token;

/** The answer to a token that is unknown, revoked, or of a deleted contact. */
export const invalidToken = () => unauthorized('Invalid or revoked API token.');

/**
 * The caller of a token found with its limits, or 401: from an address outside its networks
 * exactly as an unknown token (nothing tells whether it exists), once expired saying so
 * (API guide "Scoped tokens").
 */
function tokenActor(owner: Omit<Actor, 'scope'>, limits: TokenLimits, ip: string): Actor {
  if (limits.allow_ips !== null && !addressIn(ip, networks(limits.allow_ips))) throw invalidToken();
  if (limits.expires_at !== null && Date.parse(limits.expires_at) <= Date.now()) throw unauthorized('This API token has expired.');
  const scope = scopeOf(limits);
  return scope ? { ...owner, scope } : owner;
}

/** Stored networks (canonical CIDRs, comma separated) parsed, remembered by their text. */
const parsedNetworks = new Map<string, Cidr[]>();
function networks(text: string): Cidr[] {
  let n = parsedNetworks.get(text);
  if (!n) {
    if (parsedNetworks.size >= 1000) parsedNetworks.clear();
    n = text.split(',').map((c) => parseCidr(c)).filter((c): c is Cidr => c !== null);
    parsedNetworks.set(text, n);
  }
  return n;
}

/** The caller whose token a read with the token found (src/auth/plugin.ts TokenRead), or 401 when its limits refuse `ip`. */
export const ownerActor = (o: OwnerColumns, ip: string): Actor =>
  tokenActor(
    { customerId: o.owner_customer_id, isReseller: o.owner_is_reseller === 1, contactId: o.owner_contact_id, tokenId: o.owner_token_id },
    { read_only: o.owner_read_only, scope_domains: o.owner_scope_domains, acme_challenge: o.owner_acme_challenge, expires_at: o.owner_expires_at, allow_ips: o.owner_allow_ips },
    ip,
  );

function parseAuthorization(header: string | undefined): Credentials | null {
  if (!header) return null;
  const m = /^(\S+)\s+(.+)$/.exec(header.trim());
  if (!m) return null;
  const scheme = m[1].toLowerCase();
  if (scheme === 'token') return { token: m[2].trim() };
  if (scheme === 'basic') {
    const decoded = Buffer.from(m[2].trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    if (user === 'token') return { token: password };
    return { legacy: { customerNumber: user, password } };
  }
  return null;
}

/**
 * Resolves the caller or throws 401; the legacy password is honoured only when `mode` allows it;
 * `ip` is the client's address, which a token's networks may refuse.
 * `const resolve = actorResolver(db); await resolve('token hp_…', 'token', request.ip)`.
 */
export function actorResolver(db: Kysely<Database>) {
  const repo = new AuthRepository(db);
  // Compared against when there is no such reseller, so the answer takes as long either way and
  // the timing tells nobody which customer numbers have a legacy password (API guide
  // "Authentication").
  const dummyHash = hashLegacyPassword(crypto.randomBytes(18).toString('base64'));

  return async function resolveActor(header: string | undefined, mode: AuthMode, ip: string): Promise<Actor> {
    const creds = parseAuthorization(header);
    if (!creds) throw unauthorized(header ? 'Unsupported Authorization header; use "token <API_TOKEN>".' : 'Missing Authorization header.');
    if (creds.token !== undefined) {
      const row = await repo.tokenOwner(hashToken(creds.token));
      if (!row) throw invalidToken();
      return tokenActor({ customerId: row.customerId, isReseller: row.is_reseller === 1, contactId: row.contactId, tokenId: row.tokenId }, row, ip);
    }
    if (mode !== 'token-or-legacy') throw unauthorized('Invalid credentials.');
    const legacy = creds.legacy!;
    // The user name is the customer number without leading zeros (API guide "Authentication").
    const customerId = parseNumericId(legacy.customerNumber);
    const stored = customerId === null ? null : await repo.resellerLegacyHash(customerId);
    const ok = await verifyLegacyPassword(legacy.password, stored ?? (await dummyHash));
    if (!stored || !ok || customerId === null) throw unauthorized('Invalid credentials.');
    return { customerId, isReseller: true, contactId: null, tokenId: null };
  };
}
