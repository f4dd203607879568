// Filters and paging against GET /customers (API guide "Filters and paging", "Compatibility with
// existing clients"): unknown filters and bad paging values answer 400 invalid_parameter; page
// links are absolute, in raw brackets.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { errorDoc, useHttpCore } from '../helpers/http-core.js';

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { t, x, resellerList } = useHttpCore(engine);

  describe('filters and paging (API guide "Filters and paging", "Compatibility with existing clients")', () => {
    it.each(['filter[x]=1', 'filter%5Bx%5D=1', 'filter%5bx%5d=1'])('an unknown filter (%s) → 400 invalid_parameter naming it', async (qs) => {
      const r = await call(t.app, 'GET', `/customers?${qs}`, { token: x.reseller.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorDoc(`/customers?${qs}`, {
          id: 'invalid_parameter',
          status: '400',
          title: 'Invalid query parameter',
          detail: 'This list has no filters.',
          source: { parameter: 'filter[x]' },
        }),
      );
    });

    it.each([
      ['page[size]=0', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[size]=1001', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[size]=abc', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=-1', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=1.5', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=', 'page[size]', 'page[size] must be a whole number.'],
      ['page%5Bsize%5D=x', 'page[size]', 'page[size] must be a whole number.'],
      ['page[number]=0', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[number]=1234567890', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[number]=99999999999999999999', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[size]=001001', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[number]=1e3', 'page[number]', 'page[number] must be a whole number.'],
      ['page[size]=1&page[size]=2', 'page[size]', 'page[size] must be given once.'],
      ['page[offset]=1', 'page[offset]', 'Unknown query parameter page[offset].'],
      ['sort=name', 'sort', 'Unknown query parameter sort.'],
    ])('bad paging or parameter %s → 400 invalid_parameter', async (qs, parameter, detail) => {
      const r = await call(t.app, 'GET', `/customers?${qs}`, { token: x.reseller.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(errorDoc(`/customers?${qs}`, { id: 'invalid_parameter', status: '400', title: 'Invalid query parameter', detail, source: { parameter } }));
    });

    it('page[size]=1 pages through the list with absolute links in raw brackets and meta.page', async () => {
      const all = (resellerList as { data: unknown[] }).data;
      const link = (n: number) => `${BASE}/customers?page[number]=${n}&page[size]=1`;
      for (const n of [1, 2, 3]) {
        const url = n === 1 ? '/customers?page[size]=1' : `/customers?page%5Bsize%5D=1&page%5Bnumber%5D=${n}`;
        const r = await call(t.app, 'GET', url, { token: x.reseller.token });
        expect(r.status).toBe(200);
        expect(r.json).toEqual({
          links: { self: `${BASE}${url}`, first: link(1), last: link(3), prev: n > 1 ? link(n - 1) : null, next: n < 3 ? link(n + 1) : null },
          data: [all[n - 1]],
          meta: { total: 3, page: { number: n, size: 1, total_pages: 3 } },
        });
        // links come first, data right after them (API guide "Compatibility with existing clients")
        expect(r.body.startsWith('{"links":{"self":')).toBe(true);
      }
      const past = await call(t.app, 'GET', '/customers?page[number]=9&page[size]=2', { token: x.reseller.token });
      expect(past.json).toEqual({
        links: {
          self: `${BASE}/customers?page[number]=9&page[size]=2`,
          first: `${BASE}/customers?page[number]=1&page[size]=2`,
          last: `${BASE}/customers?page[number]=2&page[size]=2`,
          prev: `${BASE}/customers?page[number]=2&page[size]=2`,
          next: null,
        },
        data: [],
        meta: { total: 3, page: { number: 9, size: 2, total_pages: 2 } },
      });
    });
    it('the largest page number and size are served (empty page), never a 500 from the OFFSET', async () => {
      const url = '/customers?page[number]=999999999&page[size]=1000';
      const r = await call(t.app, 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        links: {
          self: `${BASE}${url}`,
          first: `${BASE}/customers?page[number]=1&page[size]=1000`,
          last: `${BASE}/customers?page[number]=1&page[size]=1000`,
          prev: `${BASE}/customers?page[number]=1&page[size]=1000`,
          next: null,
        },
        data: [],
        meta: { total: 3, page: { number: 999999999, size: 1000, total_pages: 1 } },
      });
    });
  });
});
