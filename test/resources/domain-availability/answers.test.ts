// GET /domain-availability/{names} (API guide "Domain availability"): the own registry
// first, RDAP against a real local RDAP server under one timeout, the document a client sees.
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { REASON, TIMEOUT_MS, doc, result, useAvailability } from '../../helpers/domain-availability.js';

describe.each(ENGINES)('domain-availability on %s', (engine) => {
  const { rdap, t, bare, x, get } = useAvailability(engine);

  describe('answers (API guide "Domain availability")', () => {
    it('RDAP: 200 → false, 404 → true, hanging → null, 500 → null; request order; compact, list layout (links first)', async () => {
      const url = '/domain-availability/taken.test,free.test,slow.test,broken.test';
      const before = rdap.requests.length;
      const started = Date.now();
      const r = await get(t, url);
      const elapsed = Date.now() - started;
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      const expected = doc(
        url,
        result('taken.test', false, REASON.rdapFound),
        result('free.test', true, REASON.rdapFree),
        result('slow.test', null, REASON.timeout),
        result('broken.test', null, REASON.status500),
      );
      // Byte-exact: key order is part of the contract (API guide "Compatibility with existing
      // clients"); no internals of the 500.
      expect(r.body).toBe(JSON.stringify(expected));
      // The timeout bounds the request; the hanging lookup did not hold up the others' answers.
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 1500);
      // RFC 9082 path under the configured base (its trailing slash dropped), RDAP media type.
      const sent = rdap.requests.slice(before);
      expect(sent.map((q) => q.url).sort()).toEqual(
        ['/rdap/domain/broken.test', '/rdap/domain/free.test', '/rdap/domain/slow.test', '/rdap/domain/taken.test'],
      );
      for (const q of sent) expect(q.accept).toMatch(/^application\/rdap\+json\b/);
    });

    it('lookups run in parallel under one timeout for the whole request (API guide "Domain availability")', async () => {
      const url = '/domain-availability/slow.test,slowbody.test,slow.other,free.other';
      const started = Date.now();
      const r = await get(t, url);
      const elapsed = Date.now() - started;
      expect(r.status).toBe(200);
      expect(r.json).toEqual(
        doc(
          url,
          result('slow.test', null, REASON.timeout),
          // Headers arrived, the body never finished: the same timeout covers the body.
          result('slowbody.test', null, REASON.timeout),
          result('slow.other', null, REASON.timeout),
          result('free.other', true, REASON.rdapFree),
        ),
      );
      // Three hanging lookups one after another would take three timeouts.
      expect(elapsed).toBeLessThan(2 * TIMEOUT_MS);
    });

    it('the * server answers other TLDs; unreachable server and a 200 that is no RDAP → null', async () => {
      const url = '/domain-availability/taken.other,free.refused,html.other';
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('taken.other', false, REASON.rdapFound),
            result('free.refused', null, REASON.unreachable),
            result('html.other', null, REASON.notRdap),
          ),
        ),
      );
      expect(rdap.requests.slice(before).map((q) => q.url).sort()).toEqual(['/any/domain/html.other', '/any/domain/taken.other']);
    });

    it('the own registry answers first, for domains of any customer; RDAP is not asked for them', async () => {
      // solo asks about the reseller's and end2's domains: another tenant's name is just as taken.
      const url = '/domain-availability/reseller.example,elsewhere.example,end2.example,solo.example';
      const before = rdap.requests.length;
      const r = await get(t, url, { token: x.solo.token });
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('reseller.example', false, REASON.registered),
            result('elsewhere.example', false, REASON.elsewhere),
            result('end2.example', false, REASON.registered),
            result('solo.example', false, REASON.registered),
          ),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it('without any RDAP server configured: the own registry still answers, others are null with a reason', async () => {
      const url = '/domain-availability/end1.example,free.test,elsewhere.example,taken.de';
      const before = rdap.requests.length;
      const r = await get(bare, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('end1.example', false, REASON.registered),
            result('free.test', null, REASON.noServer('test')),
            result('elsewhere.example', false, REASON.elsewhere),
            result('taken.de', null, REASON.noServer('de')),
          ),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it('Unicode names are looked up and answered in ACE form; letter case does not matter', async () => {
      const url = `/domain-availability/${encodeURIComponent('MÜNCHEN.example')},${encodeURIComponent('Bücher.test')},Taken.TEST`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('xn--mnchen-3ya.example', false, REASON.registered),
            result('xn--bcher-kva.test', true, REASON.rdapFree),
            result('taken.test', false, REASON.rdapFound),
          ),
        ),
      );
      expect(rdap.requests.slice(before).map((q) => q.url).sort()).toEqual(['/rdap/domain/taken.test', '/rdap/domain/xn--bcher-kva.test']);
    });

    it('duplicates (any case, Unicode or ACE, trailing dot) are answered once, at their first position', async () => {
      const names = ['free.test', 'end1.example', 'FREE.test', 'xn--bcher-kva.test', encodeURIComponent('bücher.TEST'), 'free.test.', '%20end1.example'];
      const url = `/domain-availability/${names.join(',')}`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json).toEqual(
        doc(url, result('free.test', true, REASON.rdapFree), result('end1.example', false, REASON.registered), result('xn--bcher-kva.test', true, REASON.rdapFree)),
      );
      expect(rdap.requests.length - before).toBe(2);
    });

    it('Accept: application/vnd.api+json → the JSON:API content type', async () => {
      const r = await get(t, '/domain-availability/end1.example', { token: x.end1.token, headers: { accept: 'application/vnd.api+json' } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      expect(r.json).toEqual(doc('/domain-availability/end1.example', result('end1.example', false, REASON.registered)));
    });
  });

  it('is documented in /openapi.json under the tag domain-availability', async () => {
    const api = (await call(t.app, 'GET', '/openapi.json')).json;
    const op = api.paths['/domain-availability/{domains}'];
    expect(Object.keys(op)).toEqual(['get']);
    expect(op.get.tags).toEqual(['domain-availability']);
    expect(op.get.summary).toBe('Check whether up to 10 comma-separated domain names are available');
    expect(op.get.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'domains', required: true, schema: expect.objectContaining({ type: 'string' }) }),
    ]);
    expect(api.tags).toEqual(expect.arrayContaining([{ name: 'domain-availability', description: expect.any(String) }]));
  });
});
