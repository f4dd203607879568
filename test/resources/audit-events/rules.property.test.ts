// Property tests (fast-check) for the rules of audit events (API guide "Audit events"): the time,
// status and path filters accept exactly their forms and never throw; the filters of a list answer
// or throw invalid_parameter naming the filter; an event's path never keeps a query credential and
// the Idempotency-Key is bounded; and which answers are recorded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import {
  AUDIT_EVENT_FILTERS, FILTER_METHODS, MAX_IDEMPOTENCY_KEY_LENGTH, MAX_PATH_LENGTH,
  auditFilters, eventPath, idempotencyKeyOf, parsePathFilter, parseStatus, parseTimestamp, recorded,
} from '../../../src/resources/audit-events/audit-events.rules.js';

/** Any instant of the years 0001–9999, to the millisecond. */
const instant = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });
const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

describe('parseTimestamp', () => {
  it('reads every instant back from its ISO form, with Z or any offset, to the millisecond', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), fc.boolean(), (d, offsetMin, colon) => {
        expect(parseTimestamp(d.toISOString())).toBe(d.toISOString());
        const local = new Date(d.getTime() + offsetMin * 60_000);
        const offset = `${offsetMin < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(offsetMin) / 60))}${colon ? ':' : ''}${pad(Math.abs(offsetMin) % 60)}`;
        const text = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${pad(local.getUTCMilliseconds(), 3)}${offset}`;
        if (local.getUTCFullYear() >= 1 && local.getUTCFullYear() <= 9999) expect(parseTimestamp(text), text).toBe(d.toISOString());
      }),
    );
  });

  it('a date alone is its midnight UTC; a fraction beyond milliseconds is cut; no seconds means :00', () => {
    expect(parseTimestamp('2026-11-22')).toBe('2026-11-22T00:00:00.000Z');
    expect(parseTimestamp('2026-11-22T03:51:28.123456789Z')).toBe('2026-11-22T03:51:28.123Z');
    expect(parseTimestamp('2026-11-22T03:51+01:00')).toBe('2026-11-22T02:51:00.000Z');
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
  });

  it('refuses what is not a real date and time, and never throws', () => {
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-11-31', '2026-11-22T24:00Z', '2026-11-22T23:60Z', '2026-11-22T23:59:60Z',
      '2026-11-22T03:51:28', '2026-11-22T03:51:28+24:00', '26-11-22', '2026-11-22Z', ' 2026-11-22', 'now', '', '0000-01-01', '9999-12-31T23:59:59-01:00']) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (s) => {
      const r = parseTimestamp(s);
      if (r !== null) expect(new Date(r).toISOString()).toBe(r);
    }));
  });
});

describe('parseStatus, parsePathFilter', () => {
  it('a status is 100–599 exactly, or a class 1xx–5xx; nothing else', () => {
    for (let s = 0; s < 1000; s++) expect(parseStatus(String(s))).toEqual(s >= 100 && s <= 599 ? { status: s } : null);
    for (const c of [1, 2, 3, 4, 5]) expect(parseStatus(`${c}xx`)).toEqual({ class: c });
    fc.assert(fc.property(fc.string({ maxLength: 6 }), (s) => {
      const r = parseStatus(s);
      expect(r === null || /^[1-5]([0-9]{2}|[xX]{2})$/.test(s)).toBe(true);
    }));
  });

  it('a path filter starts with / and loses its trailing slashes, / itself stays', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), (s) => {
      const r = parsePathFilter(s);
      if (!s.startsWith('/')) expect(r).toBeNull();
      else expect(r === '/' || (r!.startsWith('/') && !r!.endsWith('/') && s.startsWith(r!))).toBe(true);
    }));
    expect(parsePathFilter('/dns-records//')).toBe('/dns-records');
    expect(parsePathFilter('//')).toBe('/');
  });
});

describe('auditFilters', () => {
  const values = fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('1', '42', '4xx', '404', 'post', 'DELETE', '/x', '2026-11-22')), { minLength: 1, maxLength: 3 });
  it('answers filters (or null: ids that cannot match) or throws invalid_parameter naming the filter as the caller names it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...AUDIT_EVENT_FILTERS), values), fc.boolean(), (raw, cli) => {
        const name = cli ? (f: string) => `--${f}` : (f: string) => `filter[${f}]`;
        try {
          const f = auditFilters(raw, name);
          if (f?.methods) expect(f.methods.every((m) => (FILTER_METHODS as readonly string[]).includes(m))).toBe(true);
          if (f?.since) expect(parseTimestamp(f.since)).toBe(f.since);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          const e = err as AppError;
          expect(e.code).toBe('invalid_parameter');
          expect(Object.keys(raw).map(name)).toContain(e.source?.parameter);
          expect(e.detail?.startsWith(`${e.source?.parameter} `)).toBe(true);
        }
      }),
    );
  });
});

describe('eventPath, idempotencyKeyOf, recorded', () => {
  const secret = fc.string({ minLength: 6, maxLength: 16 }).filter((s) => /^[A-Za-z0-9]+$/.test(s) && !/redacted/i.test(s));
  it('no value of a credential-like query parameter survives; repeated slashes fold; at most MAX_PATH_LENGTH', () => {
    fc.assert(
      fc.property(fc.constantFrom('access_token', 'api_key', 'password', 'X-Secret', 'auth', 'sig'), secret, fc.constantFrom('', '/', '//'), (name, value, slashes) => {
        const p = eventPath(`${slashes}/dns-records//7?page[size]=2&${name}=${value}&x=1`);
        expect(p).not.toContain(value);
        expect(p).toBe(`/dns-records/7?page[size]=2&${name}=[Redacted]&x=1`);
      }),
    );
    expect(eventPath(`/x/${'a'.repeat(5000)}`)).toHaveLength(MAX_PATH_LENGTH);
    expect(eventPath('http://user:pw@api.example/dns-records')).toBe('/dns-records');
  });

  it('the Idempotency-Key is kept up to its bound; absent or empty is null', () => {
    fc.assert(fc.property(fc.string({ maxLength: 600 }), (k) => {
      const r = idempotencyKeyOf(k);
      expect(r).toBe(k === '' ? null : k.slice(0, MAX_IDEMPOTENCY_KEY_LENGTH));
    }));
    expect(idempotencyKeyOf(undefined)).toBeNull();
  });

  it('writes are recorded whatever their status, other methods only when authentication was refused; a 429 never', () => {
    const cases: [string, number, boolean][] = [
      ['POST', 202, true], ['POST', 422, true], ['DELETE', 404, true], ['PATCH', 500, true], ['PUT', 200, true], ['DELETE', 401, true],
      ['POST', 429, false], ['DELETE', 429, false], ['GET', 200, false], ['GET', 404, false], ['GET', 429, false], ['HEAD', 500, false],
      ['GET', 401, true], ['HEAD', 401, true], ['OPTIONS', 401, true],
    ];
    for (const [method, status, expected] of cases) expect(recorded(method, status), `${method} ${status}`).toBe(expected);
  });
});
