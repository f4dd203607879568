// Reading /dns-records (API guide "Filters and paging", "DNS records", "Compatibility with existing
// clients"): the record document, 404s, filters and paging, the list layout acme.sh cuts apart, and
// tenancy (each tenant sees its own zones, a reseller also its end customers').
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { errorBody, notFoundAt } from '../../helpers/errors.js';
import { acmeShRecordIds, dnsRecordsSuite, recordIdOf, txt } from '../../helpers/dns-records.js';

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, get, list, row, idsOf } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('the record document (API guide "Compatibility with existing clients", "DNS records")', () => {
    it('GET /dns-records/{id}: data first, attributes in order, tags an array, ids strings, absolute links', async () => {
      const id = (await idsOf('end1.example'))['MX '];
      const r = await get(id);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toBe(
        `{"data":{"type":"dns-record","id":"${id}","attributes":{"record_type":"MX","name":"","name_ace":"","fqdn":"end1.example",` +
          `"fqdn_ace":"end1.example","domain":"end1.example","data":"10 mail.hostplane.test","ttl":3600,"tags":["base"]},` +
          `"links":{"self":"${BASE}/dns-records/${id}"}},"links":{"self":"${BASE}/dns-records/${id}"}}`,
      );
    });

    it('unknown, malformed and out-of-range ids answer 404', async () => {
      for (const id of ['999999', 'abc', '99999999999', '-1']) {
        const r = await get(id);
        expect(r.status).toBe(404);
        expect(r.json).toEqual(notFoundAt(`${BASE}/dns-records/${id}`, 'dns-record'));
      }
    });
  });

  describe('lists and filters (API guide "Filters and paging", "DNS records")', () => {
    // Lists of more than the seven base records, and a record the reseller made in end2.example.
    beforeAll(async () => {
      await post(txt('_listed', 'v'));
      await post({ record_type: 'A', name: 'by-reseller', domain: 'end2.example', data: '192.0.2.99' }, x.reseller.token);
    });

    it('filter[domain] takes the exact domain in any form; subdomains match nothing', async () => {
      const want = (await list('?filter[domain]=end1.example')).json.data.map((d: any) => d.id);
      expect(want.length).toBeGreaterThan(7);
      for (const f of ['END1.example', 'end1.example.', 'end1.example,nowhere.example']) {
        expect((await list(`?filter[domain]=${f}`)).json.data.map((d: any) => d.id)).toEqual(want);
      }
      // Percent-encoded brackets work like raw ones (API guide "Compatibility with existing
      // clients").
      expect((await list('?filter%5Bdomain%5D=end1.example')).json.data.map((d: any) => d.id)).toEqual(want);
      const sub = await list('?filter[domain]=www.end1.example');
      expect(sub.json).toEqual({ links: { self: `${BASE}/dns-records?filter[domain]=www.end1.example` }, data: [], meta: { total: 0 } });
    });

    it('filter[record_type] (any case, comma-separated) and filter[package_id]', async () => {
      const r = await list('?filter[domain]=end2.example&filter[record_type]=mx,A', x.reseller.token);
      expect(r.json.data.map((d: any) => `${d.attributes.record_type} ${d.attributes.name}`)).toEqual(['A ', 'MX ', 'A by-reseller', 'A www']);
      const byPackage = await list(`?filter[package_id]=${x.end2.packageId}`, x.reseller.token);
      expect(new Set(byPackage.json.data.map((d: any) => d.attributes.domain))).toEqual(new Set(['end2.example']));
      expect((await list('?filter[package_id]=abc')).json.data).toEqual([]);
    });

    it('an unknown filter answers 400 invalid_parameter', async () => {
      const r = await list('?filter[name]=www');
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody('invalid_parameter', 400, 'Invalid query parameter', 'Unknown filter name; allowed: domain, package_id, record_type.', `${BASE}/dns-records?filter[name]=www`, {
          parameter: 'filter[name]',
        }),
      );
    });

    it('paging: links first, then data and meta', async () => {
      const r = await list('?filter[domain]=end1.example&page[size]=2&page[number]=2');
      expect(Object.keys(r.json)).toEqual(['links', 'data', 'meta']);
      expect(r.json.data.length).toBe(2);
      expect(r.json.meta.page).toEqual({ number: 2, size: 2, total_pages: Math.ceil(r.json.meta.total / 2) });
    });
  });

  describe('the list layout acme.sh cuts apart (API guide "Compatibility with existing clients")', () => {
    it('raw brackets: exactly one [ before the data array, links first, tags the only (never first) array, no attribute starting with id', async () => {
      const value = 'acme-layout-value_-9';
      const id = recordIdOf(await post(txt('_acme-challenge', value, { ttl: 300 })));
      const r = await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', {
        token: x.end1.token,
        headers: { 'content-type': 'application/vnd.api+json', accept: 'application/vnd.hostplane.v1+json' },
        body: '',
      });
      expect(r.status).toBe(200);
      const body = r.body;
      expect(body.startsWith(`{"links":{"self":"${BASE}/dns-records?filter[domain]=end1.example"},"data":[{`)).toBe(true);
      const dataStart = body.indexOf('"data":[') + '"data":'.length;
      expect([...body.slice(0, dataStart)].filter((c) => c === '[').length).toBe(1);
      // Without the tags arrays, the only brackets left are the filter's and the data array's.
      const stripped = body.replace(/,"tags":\[[^\]]*\]/g, '');
      expect([...stripped].filter((c) => c === '[').length).toBe(2);
      expect([...stripped].filter((c) => c === ']').length).toBe(2);
      for (const d of r.json.data) {
        const keys = Object.keys(d.attributes);
        expect(keys[0]).toBe('record_type');
        expect(keys.filter((k) => k !== 'id' && k.startsWith('id'))).toEqual([]);
        expect(Object.keys(d)).toEqual(['type', 'id', 'attributes', 'links']);
        for (const [k, v] of Object.entries(d.attributes)) expect(Array.isArray(v)).toBe(k === 'tags');
      }
      // The script's own pipeline finds exactly our record.
      expect(acmeShRecordIds(body, '_acme-challenge', value)).toEqual([id]);
    });
  });

  describe('tenancy (API guide "Authentication")', () => {
    // A second zone of end1 (an IDN) and of solo, so that "each tenant sees its own zones" spans two.
    beforeAll(async () => {
      await t.admin.domains.createDomain({ name: 'Bücher.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
      await t.admin.domains.createDomain({ name: 'templated.example', customerId: Number(x.solo.customerId), packageId: Number(x.solo.packageId) });
    });

    it('lists never leak: each tenant sees its own zones, a reseller also its end customers\'', async () => {
      const domainsSeen = async (token: string) => new Set((await list('', token)).json.data.map((d: any) => d.attributes.domain));
      expect(await domainsSeen(x.end1.token)).toEqual(new Set(['end1.example', 'xn--bcher-kva.example']));
      expect(await domainsSeen(x.end2.token)).toEqual(new Set(['end2.example']));
      expect(await domainsSeen(x.solo.token)).toEqual(new Set(['solo.example', 'templated.example']));
      expect(await domainsSeen(x.reseller.token)).toEqual(new Set(['reseller.example', 'end1.example', 'xn--bcher-kva.example', 'end2.example']));
      // Filtering for someone else's zone or package finds nothing.
      expect((await list('?filter[domain]=end2.example')).json).toEqual({ links: { self: `${BASE}/dns-records?filter[domain]=end2.example` }, data: [], meta: { total: 0 } });
      expect((await list(`?filter[package_id]=${x.solo.packageId}`)).json.data).toEqual([]);
    });

    it('other tenants\' records answer 404 on GET and DELETE and stay untouched', async () => {
      const foreign = (await idsOf('end2.example'))['A '];
      for (const token of [x.end1.token, x.solo.token]) {
        expect((await get(foreign, token)).json).toEqual(notFoundAt(`${BASE}/dns-records/${foreign}`, 'dns-record'));
        const d = await call(t.app, 'DELETE', `/dns-records/${foreign}`, { token });
        expect(d.status).toBe(404);
        expect(d.json).toEqual(notFoundAt(`${BASE}/dns-records/${foreign}`, 'dns-record'));
      }
      // The reseller's own record is invisible to its end customers, and the other way round works.
      const resellers = (await idsOf('reseller.example'))['A '];
      expect((await get(resellers, x.end1.token)).status).toBe(404);
      expect((await get(foreign, x.reseller.token)).status).toBe(200);
      expect((await row(foreign))?.state).toBe('active');
    });

    it('without credentials: 401', async () => {
      const r = await call(t.app, 'GET', '/dns-records');
      expect(r.status).toBe(401);
      expect((await call(t.app, 'POST', '/dns-records', { body: { data: { type: 'dns-record', attributes: {} } } })).status).toBe(401);
    });
  });
});
