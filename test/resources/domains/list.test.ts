// GET /domains (API guide "Filters and paging", "Domains", "Compatibility with existing clients",
// "Documents"): the scoped list ordered by ACE name, filter[owner_id] and filter[package_id],
// paging links and bad paging values.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { errorAt, useDomains } from '../../helpers/domains.js';

describe.each(ENGINES)('domains on %s', (engine) => {
  const { t, x, get } = useDomains(engine);

  describe('GET /domains', () => {
    it('lists the domains of the scope ordered by ACE name, links first (API guide "Compatibility with existing clients", "Documents")', async () => {
      const r = await call(t.app, 'GET', '/domains', { token: x.end1.token });
      expect(r.status).toBe(200);
      expect(r.body.startsWith(`{"links":{"self":"${BASE}/domains"},"data":[{"type":"domain","id":"end1.example"`)).toBe(true);
      expect(r.json.data.map((d: any) => d.id)).toEqual(['end1.example', 'flags.example', 'registered-only.example', 'xn--bcher-kva.example']);
      expect(r.json.data[0]).toEqual((await get('end1.example')).json.data);
      expect(r.json.meta).toEqual({ total: 4 });
      const reseller = await call(t.app, 'GET', '/domains', { token: x.reseller.token });
      expect(reseller.json.data.map((d: any) => d.id)).toEqual([
        'end1.example',
        'end2.example',
        'flags.example',
        'registered-only.example',
        'reseller.example',
        'xn--bcher-kva.example',
      ]);
      const solo = await call(t.app, 'GET', '/domains', { token: x.solo.token });
      expect(solo.json).toEqual({ links: { self: `${BASE}/domains` }, data: [(await get('solo.example', x.solo.token)).json.data], meta: { total: 1 } });
    });

    const ids = async (query: string, token = x.reseller.token) => {
      const url = query ? `/domains?${query}` : '/domains';
      const r = await call(t.app, 'GET', url, { token });
      expect(r.status).toBe(200);
      expect(r.json.links.self).toBe(BASE + url);
      expect(r.json.meta.total).toBe(r.json.data.length);
      return r.json.data.map((d: any) => d.id);
    };

    it('filter[owner_id]: one value, comma-separated and repeated values combine with OR (API guide "Filters and paging")', async () => {
      expect(await ids(`filter[owner_id]=${x.end2.customerId}`)).toEqual(['end2.example']);
      expect(await ids(`filter[owner_id]=${x.end2.customerId},${x.reseller.customerId}`)).toEqual(['end2.example', 'reseller.example']);
      expect(await ids(`filter[owner_id]=${x.end2.customerId}&filter[owner_id]=${x.reseller.customerId}`)).toEqual(['end2.example', 'reseller.example']);
      expect(await ids(`filter%5Bowner_id%5D=${x.end2.customerId}`)).toEqual(['end2.example']);
    });

    it('filter[package_id] and AND across attributes (API guide "Filters and paging")', async () => {
      expect(await ids(`filter[package_id]=${x.end1.packageId}`)).toEqual(['end1.example', 'flags.example', 'xn--bcher-kva.example']);
      expect(await ids(`filter[package_id]=${x.end1.packageId}&filter[owner_id]=${x.end1.customerId}`)).toEqual(['end1.example', 'flags.example', 'xn--bcher-kva.example']);
      expect(await ids(`filter[package_id]=${x.end1.packageId}&filter[owner_id]=${x.end2.customerId}`)).toEqual([]);
      expect(await ids(`filter[package_id]=${x.end1.packageId},${x.end2.packageId}&filter[owner_id]=${x.end2.customerId}`)).toEqual(['end2.example']);
    });

    it('filter values that cannot be ids, or are out of range, match nothing (no 500)', async () => {
      expect(await ids('filter[owner_id]=abc')).toEqual([]);
      expect(await ids('filter[package_id]=99999999999999999')).toEqual([]);
      expect(await ids(`filter[owner_id]=abc,${x.end2.customerId}`)).toEqual(['end2.example']);
    });

    it('an unknown filter or an empty value → 400 invalid_parameter with source.parameter (API guide "Filters and paging")', async () => {
      const r = await call(t.app, 'GET', '/domains?filter[name]=end1.example', { token: x.end1.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorAt('/domains?filter[name]=end1.example', 'invalid_parameter', 400, 'Invalid query parameter', 'Unknown filter name; allowed: owner_id, package_id.', {
          parameter: 'filter[name]',
        }),
      );
      const e = await call(t.app, 'GET', '/domains?filter[owner_id]=', { token: x.end1.token });
      expect(e.status).toBe(400);
      expect(e.json.errors[0]).toMatchObject({ id: 'invalid_parameter', source: { parameter: 'filter[owner_id]' } });
    });

    it('page[size]=1 pages with first/last/prev/next links keeping the filters, and meta.page (API guide "Filters and paging")', async () => {
      const q = `filter[owner_id]=${x.end1.customerId}&page[size]=1&page[number]=2`;
      const r = await call(t.app, 'GET', `/domains?${q}`, { token: x.reseller.token });
      expect(r.status).toBe(200);
      const link = (n: number) => `${BASE}/domains?filter[owner_id]=${x.end1.customerId}&page[number]=${n}&page[size]=1`;
      expect(r.json).toEqual({
        links: { self: `${BASE}/domains?${q}`, first: link(1), last: link(4), prev: link(1), next: link(3) },
        data: [(await get('flags.example')).json.data],
        meta: { total: 4, page: { number: 2, size: 1, total_pages: 4 } },
      });
      const first = await call(t.app, 'GET', '/domains?page[size]=1', { token: x.solo.token });
      expect(first.json).toEqual({
        links: {
          self: `${BASE}/domains?page[size]=1`,
          first: `${BASE}/domains?page[number]=1&page[size]=1`,
          last: `${BASE}/domains?page[number]=1&page[size]=1`,
          prev: null,
          next: null,
        },
        data: [(await get('solo.example', x.solo.token)).json.data],
        meta: { total: 1, page: { number: 1, size: 1, total_pages: 1 } },
      });
    });

    it('following the next links walks every domain exactly once', async () => {
      const seen: string[] = [];
      let url: string | null = `${BASE}/domains?page[size]=4`;
      while (url) {
        const r = await call(t.app, 'GET', url.slice(BASE.length), { token: x.reseller.token });
        expect(r.status).toBe(200);
        seen.push(...r.json.data.map((d: any) => d.id));
        url = r.json.links.next;
      }
      expect(seen).toEqual(await ids(''));
    });

    it('a page past the end is empty; bad paging values → 400 (API guide "Filters and paging")', async () => {
      const r = await call(t.app, 'GET', '/domains?page[number]=9&page[size]=2', { token: x.end1.token });
      expect(r.status).toBe(200);
      expect(r.json.data).toEqual([]);
      expect(r.json.meta).toEqual({ total: 4, page: { number: 9, size: 2, total_pages: 2 } });
      expect(r.json.links.next).toBeNull();
      for (const [q, parameter] of [['page[size]=0', 'page[size]'], ['page[size]=1001', 'page[size]'], ['page[number]=x', 'page[number]']]) {
        const b = await call(t.app, 'GET', `/domains?${q}`, { token: x.end1.token });
        expect(b.status).toBe(400);
        expect(b.json.errors[0]).toMatchObject({ id: 'invalid_parameter', source: { parameter } });
      }
    });
  });
});
