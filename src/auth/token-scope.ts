// What a scoped token may do (API guide "Scoped tokens"; docs/decisions/0028-token-scopes.md), in
// one place: the routes it may call (checked once per request by the authentication hook) and the
// narrowing of what it sees, which repositories apply beside tenancy (`visibleTo`) with
// `q.$call(withinTokenDomains(actor, 'dns_records.domain'))`. A limited token sees a smaller world:
// objects outside it are not found (404), lists leave them out, and whole kinds of resources outside
// it answer 403 `token_scope` naming the scope.
import { sql, type ExpressionBuilder } from 'kysely';
import { AppError } from '../errors.js';

/** The limits of a token; absent on an Actor whose token has none (or that has no token). */
export interface TokenScope {
  readOnly: boolean;
  /** ACE names of the only domains it sees (their records, subdomains and addresses); null: every domain its contact sees. */
  domains: readonly string[] | null;
  /** Only TXT records named `_acme-challenge[.<sub>]`, for ACME DNS-01 clients. */
  acmeChallenge: boolean;
}

/** Who asks, as far as the token scope cares (an auth Actor has it). */
export interface ScopedCaller {
  tokenId: number | null;
  scope?: TokenScope;
}

/** The scope columns of an `api_tokens` row as stored (migration 019). */
export interface ScopeColumns {
  read_only: number;
  scope_domains: string | null;
  acme_challenge: number;
}

/** The scope of a stored token, or undefined when it has none (every unscoped token: nothing to check). */
export function scopeOf(c: ScopeColumns): TokenScope | undefined {
  if (!c.read_only && c.scope_domains === null && !c.acme_challenge) return undefined;
  return { readOnly: c.read_only === 1, domains: c.scope_domains === null ? null : c.scope_domains.split(','), acmeChallenge: c.acme_challenge === 1 };
}

/** A token limited to domains or to ACME challenges: it sees only part of its contact's objects. */
const narrowed = (s: TokenScope | undefined): s is TokenScope => !!s && (s.domains !== null || s.acmeChallenge);

export const ACME_LABEL = '_acme-challenge';

/** `_acme-challenge` or `_acme-challenge.<sub>` (a record name relative to its zone, ACE, lower case). */
export const isAcmeChallengeName = (name: string) => name === ACME_LABEL || name.startsWith(`${ACME_LABEL}.`);

// ---- the refusals ------------------------------------------------------------------------------

const refuse = (detail: string) => new AppError('token_scope', detail);
const domainList = (s: TokenScope) => s.domains!.join(', ');
const acmeDetail = (s: TokenScope) =>
  `This token may only change TXT records named ${ACME_LABEL} or ${ACME_LABEL}.<subdomain>` +
  (s.domains ? ` of the domains ${domainList(s)}.` : ' (ACME DNS-01 challenges).');

/**
 * The routes a token limited to domains may call: the domains themselves and what lives in them,
 * and the jobs of its own requests. Every other route (databases, packages, SSH keys, customers,
 * plans, availability checks, and any route added later) answers 403: the default is no.
 */
const DOMAIN_SEGMENTS = new Set(['domains', 'dns-records', 'subdomains', 'email-addresses', 'queue-jobs']);
/** What lego and acme.sh call, and nothing else: find the zone, list, create and delete records, poll jobs. */
const ACME_ROUTES = new Set([
  'GET /domains', 'GET /domains/:name',
  'GET /dns-records', 'GET /dns-records/:id', 'POST /dns-records', 'DELETE /dns-records/:id',
  'GET /queue-jobs', 'GET /queue-jobs/:id',
]);

/**
 * Why the token may not call this route at all (403 `token_scope`), or null: `route` is Fastify's
 * route pattern (`/dns-records/:id`). Run by the authentication hook for every request of a
 * scoped token, before the body is read.
 */
export function routeRefusal(scope: TokenScope, method: string, route: string): AppError | null {
  const m = method === 'HEAD' ? 'GET' : method;
  if (scope.readOnly && m !== 'GET') return refuse('This token is read-only.');
  if (scope.acmeChallenge) return ACME_ROUTES.has(`${m} ${route}`) ? null : refuse(acmeDetail(scope));
  if (scope.domains && !DOMAIN_SEGMENTS.has(route.split('/')[1])) {
    return refuse(`This token is limited to the domains ${domainList(scope)}: it may use /domains, /dns-records, /subdomains, /email-addresses and /queue-jobs only.`);
  }
  return null;
}

/** 403 unless the caller may write a record of this type and name (relative, ACE) — for an ACME token only `_acme-challenge` TXT. */
export function checkRecordWrite(caller: ScopedCaller, recordType: string, name: string): void {
  const s = caller.scope;
  if (s?.acmeChallenge && !(recordType === 'TXT' && isAcmeChallengeName(name))) throw refuse(acmeDetail(s));
}

// ---- narrowing reads ---------------------------------------------------------------------------

/** Whether the caller's token sees the domain `ace` (tenancy is checked elsewhere). */
export const seesDomain = (caller: ScopedCaller, ace: string) => !caller.scope?.domains || caller.scope.domains.includes(ace);

/** Whether the caller's token is limited to domains (lists must then leave others out). */
export const limitedToDomains = (caller: ScopedCaller) => !!caller.scope?.domains;

type Narrow = <Q>(q: Q) => Q;
type Whereable = { where: (...args: any[]) => unknown };
const unchanged: Narrow = (q) => q;
const narrow = (apply: (q: Whereable) => unknown): Narrow => (q) => apply(q as Whereable) as typeof q;

/** Limits `column` (a domain's ACE name) to the token's domains: `q.$call(withinTokenDomains(actor, 'subdomains.domain'))`. */
export function withinTokenDomains(caller: ScopedCaller, column: string): Narrow {
  const domains = caller.scope?.domains;
  return domains ? narrow((q) => q.where(column, 'in', domains)) : unchanged;
}

/**
 * Limits DNS records (`table`: `dns_records` or its alias) to what an ACME token sees:
 * `_acme-challenge` TXT records. `q.$call(acmeRecordsOnly(actor, 'dns_records'))`.
 */
export function acmeRecordsOnly(caller: ScopedCaller, table: string): Narrow {
  if (!caller.scope?.acmeChallenge) return unchanged;
  const prefix = `${ACME_LABEL}.`;
  return narrow((q) =>
    q.where((eb: ExpressionBuilder<any, any>) =>
      eb.and([
        eb(`${table}.record_type`, '=', 'TXT'),
        eb.or([
          eb(`${table}.name`, '=', ACME_LABEL),
          // A prefix compare rather than LIKE, whose `_` wildcard and escape differ between the engines.
          sql<boolean>`substr(${sql.ref(`${table}.name`)}, 1, ${sql.lit(prefix.length)}) = ${prefix}`,
        ]),
      ]),
    ),
  );
}

/** Limits queue jobs to those its own requests enqueued when the token is limited to domains or ACME challenges. */
export function ownJobsOfNarrowToken(caller: ScopedCaller, column: string): Narrow {
  return narrowed(caller.scope) ? narrow((q) => q.where(column, '=', caller.tokenId)) : unchanged;
}
