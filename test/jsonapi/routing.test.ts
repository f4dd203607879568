// Routing against /customers (API guide "Compatibility with existing clients", "Errors"): 405 with
// Allow, 404 for unknown paths and ids, double slashes routed like single ones.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { customer, errorDoc, patchBody, useHttpCore } from '../helpers/http-core.js';

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { t, x, resellerList } = useHttpCore(engine);

  describe('routing (API guide "Compatibility with existing clients", "Errors")', () => {
    it.each([
      ['DELETE', '/customers/{id}', 'GET, PATCH'],
      ['PUT', '/customers/{id}', 'GET, PATCH'],
      ['POST', '/customers/{id}', 'GET, PATCH'],
      ['DELETE', '/customers', 'GET'],
      ['PATCH', '/customers', 'GET'],
    ])('%s %s → 405 method_not_allowed with Allow: %s', async (method, path, allow) => {
      const url = path.replace('{id}', x.end1.customerId);
      const r = await call(t.app, method as 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe(allow);
      expect(r.json).toEqual(errorDoc(url, { id: 'method_not_allowed', status: '405', title: 'Method not allowed', detail: `Use ${allow} on this path.` }));
    });

    it.each(['/no-such-endpoint', '/customers/1/extra', '/customer', '/Customers'])('unknown path %s → 404 resource_not_found', async (url) => {
      const r = await call(t.app, 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(errorDoc(url, { id: 'resource_not_found', status: '404', title: 'Resource not found', detail: 'No such endpoint.' }));
    });

    it('a known resource path with an unknown id → 404 from the resource, after authentication', async () => {
      const r = await call(t.app, 'GET', '/customers/99999999', { token: x.reseller.token });
      expect(r.status).toBe(404);
      expect(r.json.errors[0]).toMatchObject({ id: 'resource_not_found', status: '404' });
      const anon = await call(t.app, 'GET', '/customers/99999999');
      expect(anon.status).toBe(401);
    });

    it('double slashes route like single ones: //customers/<id>, //customers (API guide "Compatibility with existing clients")', async () => {
      const id = x.end1.customerId;
      const one = await call(t.app, 'GET', `//customers/${id}`, { token: x.reseller.token });
      expect(one.status).toBe(200);
      // links.self echoes the request URL as sent.
      expect(one.json).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}//customers/${id}` } });
      const list = await call(t.app, 'GET', '//customers', { token: x.reseller.token });
      expect(list.status).toBe(200);
      expect(list.json.data).toEqual((resellerList as { data: unknown }).data);
      const patch = await call(t.app, 'PATCH', `//customers/${id}`, { token: x.reseller.token, body: patchBody(id) });
      expect(patch.status).toBe(200);
      expect(patch.json.data).toEqual(customer('end1', x.end1, x.reseller));
      const wrong = await call(t.app, 'DELETE', `//customers/${id}`, { token: x.reseller.token });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.allow).toBe('GET, PATCH');
    });
  });
});
