// Property tests (fast-check) for filters and paging (API guide "Filters and paging"),
// Accept negotiation (API guide "Versioning and content types") and request bodies: the parser
// answers or throws invalid_parameter naming the parameter, accepted filters survive the paging
// links, Accept parsing never throws, a body is refused exactly when it is too deep or holds a NUL.
import Fastify, { type FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { MAX_PAGE_NUMBER, MAX_PAGE_SIZE, pageQuery, parseListQuery, type ListQuery } from '../../src/jsonapi/query.js';
import { namesJsonApi, negotiate } from '../../src/jsonapi/negotiate.js';
import { MAX_BODY_DEPTH, parseJsonBody } from '../../src/jsonapi/json-body.js';

const ALLOWED = ['domain', 'package_id', 'record_type'] as const;

/** What the query parser can hand over: a string, or an array of strings for a repeated key. */
const queryValue = fc.oneof(fc.string({ maxLength: 12 }), fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }));
const queryKey = fc.oneof(
  fc.constantFrom(...ALLOWED.map((f) => `filter[${f}]`)),
  fc.constantFrom('page[number]', 'page[size]', 'filter[]', 'filter[Domain]', 'filter[x]', 'filter', 'page', 'page[offset]', 'sort', '__proto__', 'constructor', ''),
  fc.string({ maxLength: 12 }),
  fc.string({ maxLength: 8 }).map((s) => `filter[${s}]`),
  fc.string({ maxLength: 8 }).map((s) => `page[${s}]`),
);
/** A query object as the parser builds it (own keys only, no prototype). */
const queryObject = fc.array(fc.tuple(queryKey, queryValue), { maxLength: 6 }).map((entries) => {
  const q: Record<string, unknown> = Object.create(null);
  for (const [k, v] of entries) q[k] = v;
  return q;
});
/** Digits, signs and junk around the paging numbers. */
const pageValue = fc.oneof(
  fc.integer({ min: -5, max: 2000 }).map(String),
  fc.constantFrom('', '0', '01', '1.5', '1e3', ' 1', '+1', '0x10', '999999999', '1000000000', '99999999999999999999', 'NaN', 'Infinity'),
  fc.string({ maxLength: 6 }),
);

function parseOrError(q: Record<string, unknown>, allowed: readonly string[]): ListQuery | AppError {
  try {
    return parseListQuery(q, allowed);
  } catch (err) {
    return err as AppError;
  }
}

describe('parseListQuery (API guide "Filters and paging")', () => {
  it('never throws anything but AppError(invalid_parameter) naming one of the keys sent', () => {
    fc.assert(
      fc.property(queryObject, fc.constantFrom<readonly string[]>(ALLOWED, []), (q, allowed) => {
        const r = parseOrError(q, allowed);
        if (r instanceof Error) {
          expect(r).toBeInstanceOf(AppError);
          expect(r.code).toBe('invalid_parameter');
          expect(r.status).toBe(400);
          expect(Object.keys(q)).toContain(r.source?.parameter);
          expect(r.detail).toEqual(expect.any(String));
          return;
        }
        // Accepted: only allowed filters, each a non-empty list of trimmed, comma-free, distinct values.
        for (const [name, values] of Object.entries(r.filters)) {
          expect(allowed).toContain(name);
          expect(values.length).toBeGreaterThan(0);
          expect(new Set(values).size).toBe(values.length);
          for (const v of values) {
            expect(v).not.toBe('');
            expect(v).toBe(v.trim());
            expect(v).not.toContain(',');
          }
        }
        const paged = 'page[number]' in q || 'page[size]' in q;
        expect(r.page === null).toBe(!paged);
        if (r.page) {
          expect(Number.isSafeInteger(r.page.number) && r.page.number >= 1 && r.page.number <= MAX_PAGE_NUMBER).toBe(true);
          expect(Number.isSafeInteger(r.page.size) && r.page.size >= 1 && r.page.size <= MAX_PAGE_SIZE).toBe(true);
          expect(Number.isSafeInteger((r.page.number - 1) * r.page.size)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('paging values: accepted exactly when they are whole numbers in range', () => {
    fc.assert(
      fc.property(pageValue, pageValue, (number, size) => {
        const r = parseOrError({ 'page[number]': number, 'page[size]': size }, []);
        const ok = (v: string, max: number) => /^[0-9]+$/.test(v) && Number(v) >= 1 && Number(v) <= max;
        if (ok(number, MAX_PAGE_NUMBER) && ok(size, MAX_PAGE_SIZE)) expect(r).toEqual({ filters: {}, page: { number: Number(number), size: Number(size) } });
        else expect(r).toMatchObject({ code: 'invalid_parameter', source: { parameter: expect.stringMatching(/^page\[(number|size)\]$/) } });
      }),
      { numRuns: 1000 },
    );
  });

  it('filters: values OR across repeats and commas, trimmed and de-duplicated', () => {
    expect(parseListQuery({ 'filter[domain]': ['a.de, b.de', 'a.de', 'c.de'] }, ALLOWED)).toEqual({
      filters: { domain: ['a.de', 'b.de', 'c.de'] },
      page: null,
    });
    expect(parseOrError({ 'filter[domain]': 'a.de,,b.de' }, ALLOWED)).toMatchObject({ code: 'invalid_parameter', source: { parameter: 'filter[domain]' } });
    expect(parseOrError({ 'filter[owner]': '1' }, ALLOWED)).toMatchObject({
      code: 'invalid_parameter',
      detail: 'Unknown filter owner; allowed: domain, package_id, record_type.',
      source: { parameter: 'filter[owner]' },
    });
  });
});

describe('pageQuery round trip (API guide "Filters and paging", "Compatibility with existing clients")', () => {
  // The query string of a paging link is parsed by the same parser every request goes through.
  let parser: FastifyInstance;
  beforeAll(async () => {
    parser = Fastify();
    parser.get('/', async (request) => request.query);
    await parser.ready();
  });
  afterAll(() => parser.close());
  const parse = async (qs: string) => (await parser.inject({ method: 'GET', url: '/' + qs })).json() as Record<string, unknown>;

  /** Filter values with everything a link must escape: &, =, #, +, %, brackets, spaces, Unicode. */
  const filterValue = fc.oneof(
    fc.string({ minLength: 1, maxLength: 10 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5 }),
    fc.constantFrom('a&b', 'x=y', '#frag', 'a+b', '100%', '%41', '[1]', ' padded ', 'ü.example', 'a,b', '_acme-challenge.example.com'),
  );
  const validQuery = fc
    .record({
      filters: fc.dictionary(fc.constantFrom(...ALLOWED), fc.oneof(filterValue, fc.array(filterValue, { minLength: 1, maxLength: 3 })), { maxKeys: 3 }),
      number: fc.integer({ min: 1, max: MAX_PAGE_NUMBER }),
      size: fc.integer({ min: 1, max: MAX_PAGE_SIZE }),
    })
    .map(({ filters, number, size }) => {
      const q: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(filters)) q[`filter[${k}]`] = v;
      q['page[number]'] = String(number);
      q['page[size]'] = String(size);
      return q;
    })
    .filter((q) => !(parseOrError(q, ALLOWED) instanceof Error));

  it('a link to page n keeps every accepted filter and carries page n with the same size', async () => {
    await fc.assert(
      fc.asyncProperty(validQuery, fc.integer({ min: 1, max: MAX_PAGE_NUMBER }), async (q, n) => {
        const original = parseListQuery(q, ALLOWED);
        const qs = pageQuery(q, n, original.page!.size);
        // Raw brackets in the link (API guide "Compatibility with existing clients"), nothing else
        // unescaped that could split it.
        expect(qs).toMatch(/^\?([a-z_]+\[[a-z_]+\]=[^&#\s[\]]*)(&[a-z_]+\[[a-z_]+\]=[^&#\s[\]]*)*$/);
        const again = parseListQuery(await parse(qs), ALLOWED);
        expect(again.page).toEqual({ number: n, size: original.page!.size });
        expect(Object.keys(again.filters).sort()).toEqual(Object.keys(original.filters).sort());
        for (const [k, v] of Object.entries(original.filters)) expect(new Set(again.filters[k])).toEqual(new Set(v));
      }),
      { numRuns: 300 },
    );
  });

  it('percent-encoded and raw brackets parse alike', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ALLOWED), fc.stringMatching(/^[a-z0-9.-]{1,12}$/), fc.integer({ min: 1, max: 50 }), async (f, v, size) => {
        const raw = await parse(`?filter[${f}]=${v}&page[size]=${size}`);
        const encoded = await parse(`?filter%5B${f}%5D=${v}&page%5bsize%5d=${size}`);
        expect(parseListQuery(encoded, ALLOWED)).toEqual(parseListQuery(raw, ALLOWED));
        expect(parseListQuery(raw, ALLOWED)).toEqual({ filters: { [f]: [v] }, page: { number: 1, size } });
      }),
      { numRuns: 200 },
    );
  });

  it('never throws, even on values a query parser would not produce (lone surrogates)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\uD800', 'a\uDC00b'))), (q) => {
        expect(pageQuery(q, 1, 10)).toEqual(expect.any(String));
      }),
    );
  });
});

describe('negotiate (API guide "Versioning and content types")', () => {
  const VENDOR = 'hostplane';
  const SERVED = ['application/vnd.hostplane.v1+json', 'application/vnd.api+json', 'application/json', 'application/*', '*/*'];
  const JSON_API_NAMED = /^application\/(vnd\.api\+json|vnd\.[a-z0-9-]+\.v[0-9]+\+json)$/;
  const mediaType = fc.oneof(
    fc.constantFrom(
      ...SERVED,
      'application/vnd.hostplane.v2+json',
      'application/vnd.hostplane.v10+json',
      'application/vnd.variomedia.v1+json',
      'application/vnd.hostplane+json',
      'application/xml',
      'text/html',
      'text/*',
      'image/png',
      'application/jsonx',
    ),
    fc.stringMatching(/^[a-z*]{1,8}\/[a-z0-9.+*-]{1,16}$/),
  );
  const range = fc.record({
    type: mediaType,
    upper: fc.boolean(),
    q: fc.constantFrom(null, '0', '0.0', '0.000', '0.001', '0.5', '1', '1.0'),
    extra: fc.constantFrom('', ';charset=utf-8', ';level=1', ';ext="https://jsonapi.org/ext/atomic"'),
    space: fc.constantFrom('', ' ', '  '),
  });
  const header = (rs: { type: string; upper: boolean; q: string | null; extra: string; space: string }[]) =>
    rs.map((r) => `${r.space}${r.upper ? r.type.toUpperCase() : r.type}${r.extra}${r.q === null ? '' : `;${r.space}q=${r.q}`}`).join(',');

  it('never throws on any header, and answers null or { jsonApi: boolean }', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ maxLength: 80 }), { nil: undefined }), fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), (accept, ct) => {
        const n = negotiate(accept, ct, VENDOR);
        if (n !== null) expect(n).toEqual({ jsonApi: expect.any(Boolean) });
        expect(typeof namesJsonApi(accept, ct)).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts exactly when a range with q > 0 is our v1, JSON:API, JSON or a wildcard; the type follows what was named', () => {
    fc.assert(
      fc.property(fc.array(range, { maxLength: 4 }), fc.constantFrom(undefined, 'application/json', 'application/vnd.api+json', 'text/plain', 'application/vnd.api+json; charset=utf-8'), (rs, ct) => {
        const accept = header(rs);
        const live = rs.filter((r) => r.q === null || Number(r.q) > 0).map((r) => r.type);
        const acceptable = accept.trim() === '' || live.some((t) => SERVED.includes(t));
        const jsonApi = /^application\/vnd\.api\+json/.test(ct ?? '') || live.some((t) => JSON_API_NAMED.test(t));
        expect(negotiate(accept, ct, VENDOR)).toEqual(acceptable ? { jsonApi } : null);
        expect(namesJsonApi(accept, ct)).toBe(jsonApi);
      }),
      { numRuns: 2000 },
    );
  });

  it('no Accept header: always served, JSON:API only when the Content-Type names it', () => {
    expect(negotiate(undefined, undefined, VENDOR)).toEqual({ jsonApi: false });
    expect(negotiate(undefined, 'application/vnd.api+json', VENDOR)).toEqual({ jsonApi: true });
    expect(negotiate('', 'application/json', VENDOR)).toEqual({ jsonApi: false });
  });

  it('the vendor word is the setting: another vendor\'s v1 is refused', () => {
    expect(negotiate('application/vnd.variomedia.v1+json', undefined, 'variomedia')).toEqual({ jsonApi: true });
    expect(negotiate('application/vnd.hostplane.v1+json', undefined, 'variomedia')).toBeNull();
    expect(negotiate('application/vnd.hostplane.v1+json, */*;q=0.1', undefined, 'variomedia')).toEqual({ jsonApi: true });
  });
});

describe('parseJsonBody', () => {
  // References computed on the value, not the text (recursive: generated values are shallow).
  const depthOf = (v: unknown): number =>
    v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0;
  const hasNul = (v: unknown): boolean =>
    typeof v === 'string'
      ? v.includes('\u0000')
      : v !== null && typeof v === 'object' && Object.entries(v as object).some(([k, x]) => k.includes('\u0000') || hasNul(x));

  /** Strings made of what a scanner of JSON text can trip on: quotes, backslashes, brackets, "u0000". */
  const tricky = fc.constantFrom('\u0000', '\\', '"', '[', ']', '{', '}', 'u', '0', 'a', 'é', '\n');
  const wrapped = fc
    .tuple(fc.jsonValue({ maxDepth: 6, stringUnit: tricky }), fc.array(fc.boolean(), { maxLength: MAX_BODY_DEPTH + 20 }), fc.string({ unit: tricky, maxLength: 4 }))
    .map(([v, levels, key]) => levels.reduce<unknown>((inner, array) => (array ? [inner] : { [key]: inner }), v));

  it('refuses exactly the bodies nested deeper than the bound, then those with a NUL; parses the rest as JSON.parse does', () => {
    fc.assert(
      fc.property(wrapped, fc.constantFrom(0, 2), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        let result: unknown;
        try {
          result = { ok: parseJsonBody(text) };
        } catch (err) {
          result = err;
        }
        if (depthOf(v) > MAX_BODY_DEPTH) {
          expect(result).toMatchObject({ code: 'bad_request', detail: expect.stringMatching(/^The JSON body is nested too deeply/) });
        } else if (hasNul(v)) {
          expect(result).toMatchObject({ code: 'bad_request', detail: 'Strings must not contain NUL characters (\\u0000).' });
        } else {
          expect(result).toEqual({ ok: JSON.parse(text) });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws anything but a 400 AppError, on any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), fc.string({ unit: tricky, maxLength: 100 })), (text) => {
        try {
          parseJsonBody(text);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).status).toBe(400);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('an empty or blank body is no body', () => {
    expect(parseJsonBody('')).toBeUndefined();
    expect(parseJsonBody(' \r\n\t')).toBeUndefined();
  });
});
