// /customers (API guide "Customers"): the whole document, the reseller's list,
// and PATCH of external_customer_id and is_login_disabled (422, 409, 403).
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';

describe.each(ENGINES)('customers on %s', (engine) => {
  const { t, x } = useSeededApp(engine);

  it('GET /customers/{id} answers the whole document with the main contact', async () => {
    const r = await call(t.app, 'GET', `/customers/${x.end1.customerId}`, { token: x.end1.token });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.json).toEqual({
      data: {
        type: 'customer',
        id: x.end1.customerId,
        attributes: {
          organization: 'end1 GmbH',
          name: 'end1 Admin',
          email: 'admin@end1.example',
          phone: '+49 30 1234567',
          is_reseller: false,
          is_login_disabled: false,
          external_customer_id: null,
        },
        relationships: { reseller: { data: { type: 'customer', id: x.reseller.customerId } } },
        links: { self: `${BASE}/customers/${x.end1.customerId}` },
      },
      links: { self: `${BASE}/customers/${x.end1.customerId}` },
    });
    // Compact JSON, data first (API guide "Compatibility with existing clients").
    expect(r.body.startsWith(`{"data":{"type":"customer","id":"${x.end1.customerId}"`)).toBe(true);
  });

  it('a reseller lists itself and its end customers; an end customer only itself', async () => {
    const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token });
    expect(r.status).toBe(200);
    expect(r.json.links).toEqual({ self: `${BASE}/customers` });
    expect(r.json.data.map((c: any) => c.id)).toEqual([x.reseller.customerId, x.end1.customerId, x.end2.customerId]);
    expect(r.json.meta).toEqual({ total: 3 });
    const e = await call(t.app, 'GET', '/customers', { token: x.end2.token });
    expect(e.json.data.map((c: any) => c.id)).toEqual([x.end2.customerId]);
  });

  it('PATCH by the reseller sets external_customer_id and is_login_disabled, null removes it', async () => {
    const body = { data: { type: 'customer', id: x.end1.customerId, attributes: { external_customer_id: 'crm-1.A_b', is_login_disabled: true } } };
    const r = await call(t.app, 'PATCH', `/customers/${x.end1.customerId}`, { token: x.reseller.token, body });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.api+json');
    expect(r.json.data.attributes).toMatchObject({ external_customer_id: 'crm-1.A_b', is_login_disabled: true });
    const again = await call(t.app, 'GET', `/customers/${x.end1.customerId}`, { token: x.end1.token });
    expect(again.json.data.attributes.external_customer_id).toBe('crm-1.A_b');
    const cleared = await call(t.app, 'PATCH', `/customers/${x.end1.customerId}`, {
      token: x.reseller.token,
      body: { data: { type: 'customer', id: x.end1.customerId, attributes: { external_customer_id: null, is_login_disabled: false } } },
    });
    expect(cleared.json.data.attributes).toMatchObject({ external_customer_id: null, is_login_disabled: false });
  });

  it('external_customer_id is unique among one reseller\'s customers (409)', async () => {
    const set = (id: string) =>
      call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body: { data: { type: 'customer', id, attributes: { external_customer_id: 'dup' } } } });
    expect((await set(x.end1.customerId)).status).toBe(200);
    const r = await set(x.end2.customerId);
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatchObject({ id: 'conflict', status: '409', source: { pointer: '/data/attributes/external_customer_id' } });
  });

  it.each([
    ['bad characters', { external_customer_id: 'a b' }, '/data/attributes/external_customer_id'],
    ['umlaut', { external_customer_id: 'müller' }, '/data/attributes/external_customer_id'],
    ['too long', { external_customer_id: 'x'.repeat(65) }, '/data/attributes/external_customer_id'],
    ['wrong type', { is_login_disabled: 'yes' }, '/data/attributes/is_login_disabled'],
    ['unknown attribute', { credit: 5 }, '/data/attributes/credit'],
    ['read-only attribute', { organization: 'x' }, '/data/attributes/organization'],
  ])('422 for %s, pointing at the field, nothing changed', async (_n, attributes, pointer) => {
    const before = await call(t.app, 'GET', `/customers/${x.end2.customerId}`, { token: x.end2.token });
    const r = await call(t.app, 'PATCH', `/customers/${x.end2.customerId}`, { token: x.reseller.token, body: { data: { type: 'customer', id: x.end2.customerId, attributes } } });
    expect(r.status).toBe(422);
    expect(r.json.errors[0]).toMatchObject({ id: 'invalid_api_data', status: '422', source: { pointer } });
    expect(r.json.links).toEqual({ self: `${BASE}/customers/${x.end2.customerId}` });
    const after = await call(t.app, 'GET', `/customers/${x.end2.customerId}`, { token: x.end2.token });
    expect(after.json).toEqual(before.json);
  });

  it('403 when anyone but the reseller PATCHes a customer', async () => {
    for (const [token, id] of [[x.end1.token, x.end1.customerId], [x.reseller.token, x.reseller.customerId], [x.solo.token, x.solo.customerId]]) {
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token, body: { data: { type: 'customer', id, attributes: { is_login_disabled: true } } } });
      expect(r.status).toBe(403);
      expect(r.json.errors[0]).toMatchObject({ id: 'forbidden', status: '403' });
    }
  });

  it('409 id_mismatch when data.id or data.type differ from the URL (API guide "Documents")', async () => {
    const id = x.end1.customerId;
    const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body: { data: { type: 'customer', id: x.end2.customerId, attributes: {} } } });
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatchObject({ id: 'id_mismatch', source: { pointer: '/data/id' } });
    const ty = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body: { data: { type: 'domain', id, attributes: {} } } });
    expect(ty.status).toBe(409);
    expect(ty.json.errors[0]).toMatchObject({ id: 'id_mismatch', source: { pointer: '/data/type' } });
  });
});
