// The name list of /domain-availability/{names} (API guide "Domain availability", "Compatibility
// with existing clients"): at most 10 distinct names, duplicates counted once, names that are no
// domain names, empty lists.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/app.js';
import { REASON, doc, errorDoc, invalid, result, useAvailability } from '../../helpers/domain-availability.js';
import { DOMAIN_NAME_RULE as RULE } from '../../../src/domain-name.js';

describe.each(ENGINES)('domain-availability on %s', (engine) => {
  const { rdap, t, get } = useAvailability(engine);

  describe('the name list (API guide "Domain availability")', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `free${i}.test`);

    it('10 distinct names are answered', async () => {
      const url = `/domain-availability/${ten.join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json).toEqual(doc(url, ...ten.map((n) => result(n, true, REASON.rdapFree))));
    });

    it('more than 10 → 422 invalid_api_data naming the parameter; nothing is looked up', async () => {
      const url = `/domain-availability/${[...ten, 'one-more.test'].join(',')}`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toEqual(errorDoc(url, invalid('At most 10 domain names per request; 11 given.')));
      expect(rdap.requests.length).toBe(before);
    });

    it('duplicates do not count against the limit: 10 names spelled 13 ways → 200', async () => {
      const url = `/domain-availability/${[...ten, 'FREE0.test', 'free1.test.', 'Free2.Test'].join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json.data.map((d: { id: string }) => d.id)).toEqual(ten);
    });

    it('invalid names count too: 10 valid + 1 invalid → the limit error alone', async () => {
      const url = `/domain-availability/${[...ten, 'bad_name.test'].join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(errorDoc(url, invalid('At most 10 domain names per request; 11 given.')));
    });

    it('names that are no domain names → 422, one error per bad name saying why, nothing looked up', async () => {
      const url = '/domain-availability/free.test,_acme-challenge.www.example.com,localhost,a..b.test,free.test,localhost';
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(
          url,
          invalid(`"_acme-challenge.www.example.com" is not a domain name: it contains "_". ${RULE}`),
          invalid(`"localhost" is not a domain name: it has one label only. ${RULE}`),
          invalid(`"a..b.test" is not a domain name: it has an empty label (a dot at the start, or two in a row). ${RULE}`),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it.each([
      ['/domain-availability/', 'No domain name given.'],
      ['/domain-availability/,', 'No domain name given.'],
      ['/domain-availability/%20', 'No domain name given.'],
      ['/domain-availability/free.test,,taken.test', 'Empty domain name in the list.'],
    ])('%s → 422 %s', async (url, detail) => {
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(errorDoc(url, invalid(detail)));
    });

    it('a 253-character name is checked; one of 254 is no domain name', async () => {
      const n253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`;
      const n254 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.test`;
      expect([n253.length, n254.length]).toEqual([253, 254]);
      const ok = await get(t, `/domain-availability/${n253}`);
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual(doc(`/domain-availability/${n253}`, result(n253, true, REASON.rdapFree)));
      const bad = await get(t, `/domain-availability/${n254}`);
      expect(bad.status).toBe(422);
      expect(bad.json).toEqual(errorDoc(`/domain-availability/${n254}`, invalid(`"${n254.slice(0, 77)}..." is not a domain name: it is longer than 253 characters. ${RULE}`)));
    });
  });
});
