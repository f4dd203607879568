// Property tests (fast-check) for the parsers of safe retries (API guide "Safe retries"): the
// Idempotency-Key header (a quoted string or a bare token, 1 to 255 characters once unquoted), the
// fingerprint that makes two requests "the same", If-Match / If-None-Match lists of entity tags,
// and the order in which conditions decide (RFC 9110 §13.2.2).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_KEY_LENGTH, keyScope, parseIdempotencyKey, requestText, textFingerprint } from '../../src/http/idempotency-key.js';
import { evaluate, parseTagCondition, type EntityTag } from '../../src/jsonapi/conditional.js';

/** What the store keeps of a request: its text's fingerprint. */
const requestFingerprint = (method: string, path: string, body: unknown) => textFingerprint(requestText(method, path, body));

const chars = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i));
/** Printable ASCII, space included: what a quoted key may hold. */
const PRINTABLE = chars(0x20, 0x7e);
/** What a bare key may hold. */
const BARE = [...chars(0x30, 0x39), ...chars(0x41, 0x5a), ...chars(0x61, 0x7a), ...'!#$%&\'*+.^_`|~:/-'];
/** Around a value: optional spaces and tabs. */
const ows = fc.constantFrom('', ' ', '\t', '  ');

const printableKey = fc.string({ unit: fc.constantFrom(...PRINTABLE), minLength: 1, maxLength: MAX_KEY_LENGTH });
const bareKey = fc.string({ unit: fc.constantFrom(...BARE), minLength: 1, maxLength: MAX_KEY_LENGTH });
const quote = (s: string) => `"${s.replace(/[\\"]/g, '\\$&')}"`;

describe('Idempotency-Key syntax', () => {
  it('a quoted key (escapes undone) and a bare one parse to themselves, with spaces around; both spellings are one key', () => {
    fc.assert(
      fc.property(printableKey, ows, ows, (key, before, after) => {
        expect(parseIdempotencyKey(`${before}${quote(key)}${after}`)).toBe(key);
      }),
    );
    fc.assert(
      fc.property(bareKey, ows, (key, around) => {
        expect(parseIdempotencyKey(`${around}${key}${around}`)).toBe(key);
        expect(parseIdempotencyKey(quote(key))).toBe(key);
      }),
    );
  });

  it('anything longer than 255 characters, or holding a control or non-ASCII character, is refused', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...PRINTABLE), minLength: MAX_KEY_LENGTH + 1, maxLength: MAX_KEY_LENGTH + 40 }), (key) => {
        expect(parseIdempotencyKey(quote(key))).toBeNull();
      }),
    );
    const foreign = fc.oneof(fc.constantFrom(...chars(0, 0x1f), '\x7f'), fc.integer({ min: 0x80, max: 0x10ffff }).map((c) => String.fromCodePoint(c)));
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...BARE), maxLength: 20 }), foreign, fc.string({ unit: fc.constantFrom(...BARE), maxLength: 20 }), (a, c, b) => {
        // A tab at either end is the header's optional whitespace, which HTTP strips before we see it.
        fc.pre(!(c === '\t' && (a === '' || b === '')));
        expect(parseIdempotencyKey(`${a}${c}${b}`)).toBeNull();
        expect(parseIdempotencyKey(`"${a}${c}${b}"`)).toBeNull();
      }),
    );
  });

  it('never throws; whatever it accepts is 1 to 255 printable ASCII characters', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: fc.constantFrom(...PRINTABLE, '"', '\\', ';', ','), maxLength: 40 })), (raw) => {
        const key = parseIdempotencyKey(raw);
        if (key !== null) expect(key).toMatch(/^[\x20-\x7e]{1,255}$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('whose key it is', () => {
  it("a token's keys are the token's; the reseller's legacy password (no token) uses the customer's", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.boolean(), (customerId, tokenId, isReseller) => {
        expect(keyScope({ customerId, isReseller, contactId: 1, tokenId })).toBe(`token:${tokenId}`);
        expect(keyScope({ customerId, isReseller, contactId: null, tokenId: null })).toBe(`customer:${customerId}`);
      }),
    );
  });
});

describe('the fingerprint of a request', () => {
  const body = fc.jsonValue({ maxDepth: 3 });
  it('is the same for the same method, path and JSON document however the body is spaced and slashes repeated', () => {
    fc.assert(
      fc.property(fc.constantFrom('POST', 'PATCH', 'DELETE'), fc.constantFrom('/dns-records', '/databases/7', '/subdomains/3?x=1'), body, (method, path, doc) => {
        const spaced = JSON.parse(JSON.stringify(doc, null, 2));
        expect(requestFingerprint(method, path.replace(/\//g, '//'), spaced)).toBe(requestFingerprint(method, path, doc));
      }),
    );
  });

  it('differs when the method, the path or the document differs', () => {
    fc.assert(
      fc.property(body, body, (d1, d2) => {
        fc.pre(JSON.stringify(d1) !== JSON.stringify(d2));
        expect(requestFingerprint('POST', '/dns-records', d1)).not.toBe(requestFingerprint('POST', '/dns-records', d2));
        expect(requestFingerprint('POST', '/dns-records', d1)).not.toBe(requestFingerprint('PATCH', '/dns-records', d1));
        expect(requestFingerprint('POST', '/dns-records', d1)).not.toBe(requestFingerprint('POST', '/dns-records/1', d1));
      }),
    );
    expect(requestFingerprint('DELETE', '/ssh-keys/1', undefined)).not.toBe(requestFingerprint('DELETE', '/ssh-keys/1', ''));
  });
});

// etagc of RFC 9110: visible ASCII but DQUOTE, and obs-text.
const ETAGC = [...chars(0x21, 0x7e).filter((c) => c !== '"'), ...chars(0x80, 0xff)];
const tag: fc.Arbitrary<EntityTag> = fc.record({
  weak: fc.boolean(),
  tag: fc.string({ unit: fc.constantFrom(...ETAGC), maxLength: 12 }).map((s) => `"${s}"`),
});
const written = (t: EntityTag) => `${t.weak ? 'W/' : ''}${t.tag}`;

describe('If-Match and If-None-Match', () => {
  it('a list of entity tags, with spaces and empty elements between them, parses back to the list; * alone to *', () => {
    fc.assert(
      fc.property(fc.array(tag, { minLength: 1, maxLength: 5 }), fc.constantFrom(',', ', ', ' , ', ',,', ', ,\t'), ows, (tags, sep, around) => {
        expect(parseTagCondition(`${around}${tags.map(written).join(sep)}${around}`)).toEqual(tags);
      }),
    );
    expect(parseTagCondition(' * ')).toBe('*');
  });

  it('never throws; refuses what is no list of tags', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (raw) => void parseTagCondition(raw)), { numRuns: 2000 });
    for (const bad of ['', ',', 'abc', '"a" "b"', 'W/abc', 'w/"a"', '*, "a"', '"a', '"a"b', '**']) expect(parseTagCondition(bad), bad).toBeNull();
  });

  it('If-Match holds only for the current strong tag or *; a match of If-None-Match answers 304 to a read and 412 to a write', () => {
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 4 }), tag, fc.boolean(), (others, current, read) => {
        fc.pre(!current.weak && !others.some((t) => t.tag === current.tag));
        const now = current.tag;
        expect(evaluate({ ifMatch: [...others, current] }, now, read)).toBe('proceed');
        expect(evaluate({ ifMatch: '*' }, now, read)).toBe('proceed');
        if (others.length) expect(evaluate({ ifMatch: others }, now, read)).toBe('failed');
        // Weak comparison: W/ makes no difference to If-None-Match, and If-Match never takes a weak tag.
        expect(evaluate({ ifMatch: [{ weak: true, tag: now }] }, now, read)).toBe('failed');
        const matched = read ? 'not-modified' : 'failed';
        expect(evaluate({ ifNoneMatch: [...others, { weak: true, tag: now }] }, now, read)).toBe(matched);
        expect(evaluate({ ifNoneMatch: '*' }, now, read)).toBe(matched);
        if (others.length) expect(evaluate({ ifNoneMatch: others }, now, read)).toBe('proceed');
        // If-Match is decided first.
        expect(evaluate({ ifMatch: [{ weak: false, tag: `${now.slice(0, -1)}-other"` }], ifNoneMatch: '*' }, now, read)).toBe('failed');
        // Without a tag of its own an object matches only *.
        expect(evaluate({ ifMatch: [current] }, null, read)).toBe('failed');
        expect(evaluate({ ifNoneMatch: [current] }, null, read)).toBe('proceed');
      }),
    );
  });
});
