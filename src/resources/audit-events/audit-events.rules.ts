// Rules of audit events without I/O (API guide "Audit events"; docs/decisions/0029-audit-trail.md):
// which requests are recorded, how a request's path and headers become an event's columns, and
// the filters of the list, for the API and the operator's `hostplane admin audit` alike.
import { AppError } from '../../errors.js';
import { redactUrl } from '../../http/log-url.js';
import { originForm } from '../../jsonapi/document.js';
import { idValues } from '../../db/ids.js';

/** The methods of requests that change something: recorded whatever their answer. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Methods a filter may name: the writes, and those of refused authentications. */
export const FILTER_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Longest path kept; the rest is cut (the router's own limit lets paths of ~2.5 kB through). */
export const MAX_PATH_LENGTH = 2000;
/** Longest Idempotency-Key kept. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Whether an answer is recorded: every write (whatever its status), and every refused
 * authentication (401, any method); never a 429, which the limiter answers before anyone is known
 * and which a client may provoke without bound. `recorded('GET', 401)` → true.
 */
export const recorded = (method: string, status: number): boolean => status !== 429 && (status === 401 || WRITE_METHODS.has(method));

/**
 * The path of an event: the request target in origin form, repeated slashes folded (as the router
 * reads them), credentials in the query redacted, at most MAX_PATH_LENGTH characters:
 * `eventPath('//dns-records/7?access_token=x')` → `/dns-records/7?access_token=[Redacted]`.
 */
export function eventPath(rawUrl: string): string {
  const target = originForm(rawUrl);
  const q = target.indexOf('?');
  const path = (q === -1 ? target : target.slice(0, q)).replace(/\/{2,}/g, '/');
  return redactUrl(q === -1 ? path : path + target.slice(q)).slice(0, MAX_PATH_LENGTH);
}

/** The Idempotency-Key header's value as recorded: null when absent or empty, else at most MAX_IDEMPOTENCY_KEY_LENGTH characters. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header.join(', ') : header;
  return value ? value.slice(0, MAX_IDEMPOTENCY_KEY_LENGTH) : null;
}

// ---- filters ------------------------------------------------------------------------------------

export const AUDIT_EVENT_FILTERS = ['customer_id', 'token_id', 'method', 'path', 'status', 'since', 'until'] as const;

/** The filters after parsing; each given one holds at least one value (OR within, AND across). */
export interface AuditFilters {
  customerIds?: number[];
  tokenIds?: number[];
  methods?: string[];
  /** Paths without a trailing slash: an event matches one exactly or lies below it (`/x` matches `/x/1` and `/x?y`). */
  paths?: string[];
  /** Exact statuses and whole classes (`4` for `4xx`). */
  statuses?: number[];
  classes?: number[];
  /** ISO timestamps: since inclusive, until exclusive. */
  since?: string;
  until?: string;
}

export const TIMESTAMP_FORM = 'an ISO 8601 time such as 2026-11-22T03:51:28Z (or with an offset, +01:00) or a date such as 2026-11-22 (00:00 UTC)';

const TIMESTAMP = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-]([0-9]{2}):?([0-9]{2})))?$/i;

/**
 * A time as a filter gives it, in the store's form (ISO UTC with milliseconds), or null when it is
 * none: `parseTimestamp('2026-11-22T04:51:28+01:00')` → `'2026-11-22T03:51:28.000Z'`. Only real
 * dates and times (no 2026-02-30, no 24:00); a fraction beyond milliseconds is cut.
 */
export function parseTimestamp(value: string): string | null {
  const m = TIMESTAMP.exec(value);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const ms = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const sign = m[8]?.startsWith('-') ? -1 : 1;
  const offsetH = m[9] === undefined ? 0 : Number(m[9]);
  const offsetM = m[10] === undefined ? 0 : Number(m[10]);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 || offsetH > 23 || offsetM > 59) return null;
  // Not Date.UTC, which reads the years 0–99 as 1900–1999.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, ms);
  if (local.getUTCDate() !== day) return null;
  const t = local.getTime() - sign * (offsetH * 60 + offsetM) * 60_000;
  const at = new Date(t);
  return at.getUTCFullYear() < 1 || at.getUTCFullYear() > 9999 ? null : at.toISOString();
}

/** A status filter value: `404` → the status, `4xx` → the class 4; null when it is neither (100–599). */
export function parseStatus(value: string): { status: number } | { class: number } | null {
  const m = /^([1-5])(?:([0-9]{2})|xx)$/i.exec(value);
  if (!m) return null;
  return m[2] === undefined ? { class: Number(m[1]) } : { status: Number(value) };
}

/** A path filter value without its trailing slash (`/` stays), or null when it does not start with `/`. */
export const parsePathFilter = (value: string): string | null => (value.startsWith('/') ? value.replace(/(?<=.)\/+$/, '') : null);

/**
 * Parses the filters of `GET /audit-events` (values as parseListQuery hands them over); a bad value
 * is 400 `invalid_parameter` naming `name(filter)`: `filter[since]` for the API, `--since` for the
 * CLI. Filters on ids whose values cannot be ids match nothing: answers `null` then.
 */
export function auditFilters(raw: Record<string, string[]>, name: (filter: string) => string = (f) => `filter[${f}]`): AuditFilters | null {
  const bad = (filter: string, detail: string) => new AppError('invalid_parameter', `${name(filter)} ${detail}`, { parameter: name(filter) });
  const f: AuditFilters = {};
  for (const [key, values] of Object.entries(raw)) {
    if (key === 'customer_id' || key === 'token_id') {
      const ids = idValues(values)!;
      if (!ids.length) return null;
      if (key === 'customer_id') f.customerIds = ids;
      else f.tokenIds = ids;
    } else if (key === 'method') {
      const methods = values.map((v) => v.toUpperCase());
      const unknown = methods.find((m) => !(FILTER_METHODS as readonly string[]).includes(m));
      if (unknown !== undefined) throw bad(key, `must be one of ${FILTER_METHODS.join(', ')}.`);
      f.methods = methods;
    } else if (key === 'path') {
      const paths = values.map(parsePathFilter);
      if (paths.includes(null)) throw bad(key, 'must start with /, e.g. /dns-records.');
      f.paths = paths as string[];
    } else if (key === 'status') {
      for (const v of values) {
        const s = parseStatus(v);
        if (!s) throw bad(key, 'must be an HTTP status (100–599) or a class such as 4xx.');
        if ('status' in s) (f.statuses ??= []).push(s.status);
        else (f.classes ??= []).push(s.class);
      }
    } else if (key === 'since' || key === 'until') {
      if (values.length !== 1) throw bad(key, 'must be given once.');
      const at = parseTimestamp(values[0]);
      if (at === null) throw bad(key, `must be ${TIMESTAMP_FORM}.`);
      f[key] = at;
    }
  }
  return f;
}
