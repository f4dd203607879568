// The operator's scope options of `admin token create` (API guide "Scoped tokens";
// docs/decisions/0028-token-scopes.md), checked and turned into what `api_tokens` stores; and the
// other way, what `admin token list` shows of a stored token.
import { DateTime } from 'luxon';
import { aceOf } from '../domain-name.js';
import { formatCidr, parseCidr } from '../auth/cidr.js';
import { invalid } from './operator-errors.js';

/** What the operator asked for; every member optional (a token without any is unlimited). */
export interface TokenScopeOptions {
  readOnly?: boolean;
  /** Domain names (Unicode or ACE); each must be one the contact's customer sees. */
  domains?: string[];
  acmeChallenge?: boolean;
  /** `YYYY-MM-DD` (00:00 Europe/Berlin of that day, as every date of the API) or an ISO timestamp with its offset. */
  expires?: string;
  /** CIDRs or single addresses, IPv4 or IPv6. */
  allowIps?: string[];
}

/** The scope columns of `api_tokens` (migration 019). */
export interface StoredScope {
  read_only: 0 | 1;
  scope_domains: string | null;
  acme_challenge: 0 | 1;
  expires_at: string | null;
  allow_ips: string | null;
}

/** The zone whose midnight a date-only `--expires` means: the same as the API's other dates. */
const DATE_ZONE = 'Europe/Berlin';

/** The instant `--expires` names (ISO, UTC), or a refusal saying how to write it; it must lie after `now`. */
export function parseExpiry(text: string, now: Date): string {
  const t = text.trim();
  const at = /^\d{4}-\d{2}-\d{2}$/.test(t)
    ? DateTime.fromISO(t, { zone: DATE_ZONE })
    : /(Z|[+-]\d{2}:?\d{2})$/i.test(t) && t.includes('T')
      ? DateTime.fromISO(t, { setZone: true })
      : null;
  if (!at?.isValid) {
    throw invalid(`--expires "${text}" is not a date: write YYYY-MM-DD (00:00 Europe/Berlin of that day) or a timestamp with its offset, e.g. 2027-01-31T12:00:00Z.`);
  }
  if (at.toMillis() <= now.getTime()) throw invalid(`--expires ${text} is not in the future.`);
  return at.toUTC().toISO()!;
}

/** The networks `--allow-ip` names, canonical and without repeats, or a refusal naming the bad one. */
export function parseAllowIps(texts: string[]): string[] {
  const out = texts.map((text) => {
    const c = parseCidr(text);
    if (!c) throw invalid(`--allow-ip "${text}" is not an address or network: write e.g. 192.0.2.0/24, 2001:db8::/32 or 192.0.2.7 (host bits must be zero).`);
    return formatCidr(c);
  });
  return [...new Set(out)];
}

/**
 * Checks the options and returns the columns to store. `ownDomain(ace)` says whether the
 * contact's customer sees that domain (tenancy: a reseller also its end customers').
 */
export async function storedScope(o: TokenScopeOptions, ownDomain: (ace: string) => Promise<boolean>, now: Date): Promise<StoredScope> {
  if (o.readOnly && o.acmeChallenge) throw invalid('--read-only and --acme-challenge together leave nothing to do: an ACME client must write its TXT records.');
  const domains: string[] = [];
  for (const name of o.domains ?? []) {
    const ace = aceOf(name);
    if (ace === null || !(await ownDomain(ace))) throw invalid(`--domain ${name} is not a domain of the contact's customer.`);
    if (!domains.includes(ace)) domains.push(ace);
  }
  const ips = o.allowIps?.length ? parseAllowIps(o.allowIps) : [];
  return {
    read_only: o.readOnly ? 1 : 0,
    scope_domains: domains.length ? domains.join(',') : null,
    acme_challenge: o.acmeChallenge ? 1 : 0,
    expires_at: o.expires === undefined ? null : parseExpiry(o.expires, now),
    allow_ips: ips.length ? ips.join(',') : null,
  };
}

/** What `admin token list` shows of a token's scope: `full`, or its limits, e.g. `read-only; domains a.example,b.example; from 192.0.2.0/24`. */
export function describeStoredScope(s: StoredScope): string {
  const parts = [
    s.read_only ? 'read-only' : null,
    s.acme_challenge ? 'acme-challenge' : null,
    s.scope_domains ? `domains ${s.scope_domains}` : null,
    s.allow_ips ? `from ${s.allow_ips}` : null,
  ].filter((p) => p !== null);
  return parts.length ? parts.join('; ') : 'full';
}
