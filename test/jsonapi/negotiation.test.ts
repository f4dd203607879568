// Content negotiation against /customers (API guide "Versioning and content types", "Compatibility
// with existing clients"): Accept versioning with API_VENDOR, 406 before authentication, and the
// content type of answers and error documents.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { JSON_CT, VND, customer, errorDoc, patchBody, useHttpCore } from '../helpers/http-core.js';

const NOT_ACCEPTABLE = (vendor: string) => ({
  id: 'not_acceptable',
  status: '406',
  title: 'Not acceptable',
  detail: `Accept names no supported representation; use application/vnd.${vendor}.v1+json or application/vnd.api+json.`,
});

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { t, vario, x, resellerList } = useHttpCore(engine, { vario: true });

  describe('Accept versioning (API guide "Versioning and content types")', () => {
    it.each([
      ['application/vnd.hostplane.v1+json', VND],
      ['application/vnd.api+json', VND],
      ['application/json', JSON_CT],
      ['*/*', JSON_CT],
      ['application/*', JSON_CT],
      ['text/html,application/xhtml+xml,*/*;q=0.8', JSON_CT],
      ['application/vnd.hostplane.v2+json, application/json;q=0.5', VND],
      [undefined, JSON_CT],
      ['', JSON_CT],
    ])('Accept %j is served as the newest version, content type %s', async (accept, type) => {
      const headers: Record<string, string> = accept === undefined ? {} : { accept };
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(type);
      expect(r.json).toEqual(resellerList);
    });

    it.each([
      ['application/vnd.hostplane.v2+json', VND],
      ['application/vnd.hostplane.v0+json', VND],
      ['application/vnd.variomedia.v1+json', VND],
      ['application/vnd.api+json;q=0', JSON_CT],
      ['text/html', JSON_CT],
      ['application/xml, text/plain', JSON_CT],
    ])('Accept %j → 406 not_acceptable (content type %s)', async (accept, type) => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept } });
      expect(r.status).toBe(406);
      expect(r.headers['content-type']).toBe(type);
      expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('hostplane')));
    });

    it('API_VENDOR=variomedia serves application/vnd.variomedia.v1+json and refuses hostplane\'s type', async () => {
      const ok = await call(vario.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept: 'application/vnd.variomedia.v1+json' } });
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toBe(VND);
      expect(ok.json).toEqual(resellerList);
      for (const accept of ['application/vnd.hostplane.v1+json', 'application/vnd.variomedia.v2+json']) {
        const r = await call(vario.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept } });
        expect(r.status).toBe(406);
        expect(r.headers['content-type']).toBe(VND);
        expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('variomedia')));
      }
    });

    it('406 is decided before authentication (no token needed to learn the versions)', async () => {
      const r = await call(t.app, 'GET', '/customers', { headers: { accept: 'application/vnd.hostplane.v2+json' } });
      expect(r.status).toBe(406);
      expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('hostplane')));
    });
  });

  describe('response content type (API guide "Versioning and content types")', () => {
    it('follows a JSON:API Content-Type on a GET without body (API guide "Compatibility with existing clients")', async () => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'content-type': VND } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(VND);
      expect(r.json).toEqual(resellerList);
    });

    it('PATCH: application/json in and no Accept → application/json; JSON:API in either header → vnd.api+json', async () => {
      const id = x.end1.customerId;
      const cases: [Record<string, string>, string][] = [
        [{ 'content-type': JSON_CT }, JSON_CT],
        [{ 'content-type': 'application/json; charset=utf-8' }, JSON_CT],
        [{ 'content-type': VND }, VND],
        [{ 'content-type': JSON_CT, accept: VND }, VND],
        [{ 'content-type': JSON_CT, accept: 'application/vnd.hostplane.v1+json' }, VND],
      ];
      for (const [headers, type] of cases) {
        const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body: patchBody(id), headers });
        expect(r.status, JSON.stringify(headers)).toBe(200);
        expect(r.headers['content-type'], JSON.stringify(headers)).toBe(type);
        expect(r.json).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}/customers/${id}` } });
      }
    });

    it.each([
      ['401', 'GET', '/customers', false],
      ['404', 'GET', '/no-such-endpoint', true],
      ['405', 'DELETE', '/customers', true],
    ] as const)('error documents (%s) follow the same rule, with no charset parameter', async (status, method, url, withToken) => {
      for (const [headers, type] of [
        [{}, JSON_CT],
        [{ accept: VND }, VND],
        [{ accept: 'application/vnd.hostplane.v1+json' }, VND],
        [{ 'content-type': VND }, VND],
        [{ accept: '*/*' }, JSON_CT],
      ] as [Record<string, string>, string][]) {
        const r = await call(t.app, method, url, { token: withToken ? x.reseller.token : undefined, headers });
        expect(String(r.status)).toBe(status);
        expect(r.headers['content-type'], JSON.stringify(headers)).toBe(type);
        expect(r.json.errors[0].status).toBe(status);
      }
    });
  });
});
