// /domains (spec §2.3, §4.1, §4.2; API-NOTES §1.1, §1.10, §1.11, §2, §6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from './helpers/app.js';
import { seedTenants, type Tenants } from './helpers/tenants.js';

const LONG_253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
const LONG_254 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;

describe.each(ENGINES)('domains on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const row = async (name: string) => (await t.admin.repo.domains()).find((d) => d.name === name)!;
  const get = (name: string, token = x.end1.token) => call(t.app, 'GET', `/domains/${encodeURIComponent(name)}`, { token });
  const patch = (name: string, data: unknown, token = x.end1.token) =>
    call(t.app, 'PATCH', `/domains/${encodeURIComponent(name)}`, { token, body: { data } });
  const errorBody = (url: string, id: string, status: number, title: string, detail: string, source?: object) => ({
    errors: [{ id, status: String(status), title, detail, ...(source ? { source } : {}) }],
    links: { self: BASE + url },
  });

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    const end1 = Number(x.end1.customerId);
    // Registered elsewhere, used with end1's package (presence only); an IDN.
    await t.admin.createDomain({ name: 'Bücher.example', customerId: end1, packageId: Number(x.end1.packageId) });
    // Registered with the service, not used with a package (registration only).
    await t.admin.createDomain({ name: 'registered-only.example', customerId: end1, registered: true, expiresAt: '2031-01-02T03:04:05.000Z' });
    // For PATCH tests, so the other tests see unchanged flags.
    await t.admin.createDomain({ name: 'flags.example', customerId: end1, packageId: Number(x.end1.packageId) });
  });
  afterAll(() => t.close());

  it('GET /domains/{name} answers the whole document, compact, data first (§2.3, API-NOTES §1.1, §6)', async () => {
    const d = await row('end1.example');
    const r = await get('end1.example');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const expected = {
      data: {
        type: 'domain',
        id: 'end1.example',
        attributes: {
          name: 'end1.example',
          name_ace: 'end1.example',
          registration: { created_at: d.registration_created_at, expires_at: d.registration_expires_at, status: 'active' },
          presence: { dns_update_lock: false, dns_migration_mode: { enabled: false } },
        },
        relationships: {
          owner: { data: { type: 'customer', id: x.end1.customerId } },
          package: { data: { type: 'package', id: x.end1.packageId } },
        },
        links: { self: `${BASE}/domains/end1.example` },
      },
      links: { self: `${BASE}/domains/end1.example` },
    };
    // Byte-exact: key order is part of the contract (acme.sh greps `"id":"<domain>"`).
    expect(r.body).toBe(JSON.stringify(expected));
    expect(d.registration_created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('a registration-only domain has presence null and no package (§2.3)', async () => {
    const d = await row('registered-only.example');
    const r = await get('registered-only.example');
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({
      type: 'domain',
      id: 'registered-only.example',
      attributes: {
        name: 'registered-only.example',
        name_ace: 'registered-only.example',
        registration: { created_at: d.registration_created_at, expires_at: '2031-01-02T03:04:05.000Z', status: 'active' },
        presence: null,
      },
      relationships: { owner: { data: { type: 'customer', id: x.end1.customerId } }, package: { data: null } },
      links: { self: `${BASE}/domains/registered-only.example` },
    });
  });

  it.each([
    ['the Unicode form', 'bücher.example'],
    ['the ACE form', 'xn--bcher-kva.example'],
    ['upper-case Unicode', 'BÜCHER.EXAMPLE'],
    ['upper-case ACE', 'XN--BCHER-KVA.Example'],
  ])('an IDN presence domain is found by %s; id is the ACE name (API-NOTES §6)', async (_n, name) => {
    const r = await get(name);
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({
      type: 'domain',
      id: 'xn--bcher-kva.example',
      attributes: {
        name: 'bücher.example',
        name_ace: 'xn--bcher-kva.example',
        registration: null,
        presence: { dns_update_lock: false, dns_migration_mode: { enabled: false } },
      },
      relationships: {
        owner: { data: { type: 'customer', id: x.end1.customerId } },
        package: { data: { type: 'package', id: x.end1.packageId } },
      },
      links: { self: `${BASE}/domains/xn--bcher-kva.example` },
    });
    expect(r.json.links).toEqual({ self: `${BASE}/domains/${encodeURIComponent(name)}` });
  });

  it.each([
    ['an underscore label (ACME challenge name)', '_acme-challenge.www.example.com'],
    ['an underscore label below an own domain', '_acme-challenge.end1.example'],
    ['an empty label', 'a..example'],
    ['a label starting with a hyphen', '-bad.example'],
    ['a single label', 'localhost'],
    ['a space', 'a b.example'],
    ['254 characters', LONG_254],
    ['a 64-character label', `${'a'.repeat(64)}.example`],
  ])('GET with %s → 422 invalid_api_data "Not ACE-encodable." (API-NOTES §1.10)', async (_n, name) => {
    const url = `/domains/${encodeURIComponent(name)}`;
    const r = await call(t.app, 'GET', url, { token: x.end1.token });
    expect(r.status).toBe(422);
    expect(r.json).toEqual(errorBody(url, 'invalid_api_data', 422, 'Invalid data', 'Not ACE-encodable.'));
  });

  it('the ACME name is routed with raw characters too (acme.sh/lego send it unencoded)', async () => {
    const r = await call(t.app, 'GET', '/domains/_acme-challenge.www.example.com', { token: x.end1.token });
    expect(r.status).toBe(422);
    expect(r.body).toBe(
      '{"errors":[{"id":"invalid_api_data","status":"422","title":"Invalid data","detail":"Not ACE-encodable."}],' +
        `"links":{"self":"${BASE}/domains/_acme-challenge.www.example.com"}}`,
    );
  });

  it.each([
    ['an unknown domain', 'unknown.example'],
    ['a subdomain of an own domain', 'www.end1.example'],
    ['a 253-character name (routed, not a router error)', LONG_253],
    ["another customer's domain", 'solo.example'],
    ["the reseller's domain (for its end customer)", 'reseller.example'],
  ])('GET %s → 404 resource_not_found (API-NOTES §1.10)', async (_n, name) => {
    const url = `/domains/${name}`;
    const r = await call(t.app, 'GET', url, { token: x.end1.token });
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorBody(url, 'resource_not_found', 404, 'Resource not found', 'No such domain.'));
  });

  it("a reseller sees its end customers' domains", async () => {
    const r = await get('end2.example', x.reseller.token);
    expect(r.status).toBe(200);
    expect(r.json.data.relationships.owner).toEqual({ data: { type: 'customer', id: x.end2.customerId } });
  });

  describe('GET /domains', () => {
    it('lists the domains of the scope ordered by ACE name, links first (API-NOTES §1.11, §2)', async () => {
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

    it('filter[owner_id]: one value, comma-separated and repeated values combine with OR (§4.1)', async () => {
      expect(await ids(`filter[owner_id]=${x.end2.customerId}`)).toEqual(['end2.example']);
      expect(await ids(`filter[owner_id]=${x.end2.customerId},${x.reseller.customerId}`)).toEqual(['end2.example', 'reseller.example']);
      expect(await ids(`filter[owner_id]=${x.end2.customerId}&filter[owner_id]=${x.reseller.customerId}`)).toEqual(['end2.example', 'reseller.example']);
      expect(await ids(`filter%5Bowner_id%5D=${x.end2.customerId}`)).toEqual(['end2.example']);
    });

    it('filter[package_id] and AND across attributes (§4.1)', async () => {
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

    it('an unknown filter or an empty value → 400 invalid_parameter with source.parameter (API-NOTES §2)', async () => {
      const r = await call(t.app, 'GET', '/domains?filter[name]=end1.example', { token: x.end1.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody('/domains?filter[name]=end1.example', 'invalid_parameter', 400, 'Invalid query parameter', 'Unknown filter name; allowed: owner_id, package_id.', {
          parameter: 'filter[name]',
        }),
      );
      const e = await call(t.app, 'GET', '/domains?filter[owner_id]=', { token: x.end1.token });
      expect(e.status).toBe(400);
      expect(e.json.errors[0]).toMatchObject({ id: 'invalid_parameter', source: { parameter: 'filter[owner_id]' } });
    });

    it('page[size]=1 pages with first/last/prev/next links keeping the filters, and meta.page (§4.1, API-NOTES §2)', async () => {
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

    it('a page past the end is empty; bad paging values → 400 (API-NOTES §2)', async () => {
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

  describe('PATCH /domains/{name} (§2.0, §4.2, API-NOTES §6)', () => {
    const presence = (p: object) => ({ type: 'domain', id: 'flags.example', attributes: { presence: p } });

    it('sets dns_update_lock and answers 200 with the whole resource', async () => {
      const r = await patch('flags.example', presence({ dns_update_lock: true }));
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      expect(r.body).toBe(
        JSON.stringify({
          data: {
            type: 'domain',
            id: 'flags.example',
            attributes: {
              name: 'flags.example',
              name_ace: 'flags.example',
              registration: null,
              presence: { dns_update_lock: true, dns_migration_mode: { enabled: false } },
            },
            relationships: {
              owner: { data: { type: 'customer', id: x.end1.customerId } },
              package: { data: { type: 'package', id: x.end1.packageId } },
            },
            links: { self: `${BASE}/domains/flags.example` },
          },
          links: { self: `${BASE}/domains/flags.example` },
        }),
      );
      expect((await get('flags.example')).json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: false } });
    });

    it('updates nested groups partially: keys left out keep their value (§2.0)', async () => {
      const a = await patch('flags.example', presence({ dns_migration_mode: { enabled: true } }));
      expect(a.status).toBe(200);
      expect(a.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true } });
      const b = await patch('flags.example', presence({}));
      expect(b.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true } });
      const c = await patch('flags.example', presence({ dns_migration_mode: {} }));
      expect(c.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true } });
      const d = await patch('flags.example', { type: 'domain', id: 'flags.example', attributes: {} });
      expect(d.status).toBe(200);
      const e = await patch('flags.example', presence({ dns_update_lock: false, dns_migration_mode: { enabled: false } }));
      expect(e.json.data.attributes.presence).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: false } });
      expect((await get('flags.example')).json.data.attributes.presence).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: false } });
    });

    it('data.id may spell the name in Unicode or ACE, any case (compared ACE-normalised)', async () => {
      const r = await patch('bücher.example', { type: 'domain', id: 'XN--BCHER-KVA.example', attributes: { presence: { dns_update_lock: true } } });
      expect(r.status).toBe(200);
      expect(r.json.data.id).toBe('xn--bcher-kva.example');
      expect(r.json.data.attributes.presence.dns_update_lock).toBe(true);
      const back = await patch('xn--bcher-kva.example', { type: 'domain', id: 'Bücher.example', attributes: { presence: { dns_update_lock: false } } });
      expect(back.status).toBe(200);
      expect(back.json.data.attributes.presence.dns_update_lock).toBe(false);
    });

    it("a reseller changes its end customer's domain", async () => {
      const r = await patch('end2.example', { type: 'domain', id: 'end2.example', attributes: { presence: { dns_update_lock: true } } }, x.reseller.token);
      expect(r.status).toBe(200);
      expect((await get('end2.example', x.end2.token)).json.data.attributes.presence.dns_update_lock).toBe(true);
      await patch('end2.example', { type: 'domain', id: 'end2.example', attributes: { presence: { dns_update_lock: false } } }, x.reseller.token);
    });

    it.each([
      ['an unknown attribute', { registration: null }, '/data/attributes/registration'],
      ['a read-only attribute', { name: 'x.example' }, '/data/attributes/name'],
      ['an unknown presence key', { presence: { dns_lock: true } }, '/data/attributes/presence/dns_lock'],
      ['an unknown dns_migration_mode key', { presence: { dns_migration_mode: { enabled: true, until: 'x' } } }, '/data/attributes/presence/dns_migration_mode/until'],
      ['a string for a flag', { presence: { dns_update_lock: 'yes' } }, '/data/attributes/presence/dns_update_lock'],
      ['a boolean for dns_migration_mode', { presence: { dns_migration_mode: true } }, '/data/attributes/presence/dns_migration_mode'],
      ['presence null', { presence: null }, '/data/attributes/presence'],
    ])('422 invalid_api_data for %s, pointing at it; nothing changed', async (_n, attributes, pointer) => {
      const before = await get('flags.example');
      const r = await patch('flags.example', { type: 'domain', id: 'flags.example', attributes: { presence: { dns_update_lock: true }, ...attributes } });
      expect(r.status).toBe(422);
      expect(r.json.errors[0]).toMatchObject({ id: 'invalid_api_data', status: '422', title: 'Invalid data', source: { pointer } });
      expect(r.json.links).toEqual({ self: `${BASE}/domains/flags.example` });
      expect((await get('flags.example')).json).toEqual(before.json);
    });

    it('409 invalid_state on a domain without presence', async () => {
      const before = await get('registered-only.example');
      const r = await patch('registered-only.example', { type: 'domain', id: 'registered-only.example', attributes: { presence: { dns_update_lock: true } } });
      expect(r.status).toBe(409);
      expect(r.json).toEqual(
        errorBody('/domains/registered-only.example', 'invalid_state', 409, 'Not allowed in the current state', 'This domain is not assigned to a presence; it has no presence flags to change.', {
          pointer: '/data/attributes/presence',
        }),
      );
      expect((await get('registered-only.example')).json).toEqual(before.json);
    });

    it('409 id_mismatch when data.id names another domain or data.type is wrong (§7.3)', async () => {
      const r = await patch('flags.example', { type: 'domain', id: 'end1.example', attributes: { presence: { dns_update_lock: true } } });
      expect(r.status).toBe(409);
      expect(r.json).toEqual(
        errorBody('/domains/flags.example', 'id_mismatch', 409, 'Identifier mismatch', 'data.id must equal the identifier in the URL.', { pointer: '/data/id' }),
      );
      const bad = await patch('flags.example', { type: 'domain', id: '_x.flags.example', attributes: {} });
      expect(bad.status).toBe(409);
      const ty = await patch('flags.example', { type: 'customer', id: 'flags.example', attributes: {} });
      expect(ty.status).toBe(409);
      expect(ty.json.errors[0]).toMatchObject({ id: 'id_mismatch', source: { pointer: '/data/type' } });
      expect((await get('flags.example')).json.data.attributes.presence.dns_update_lock).toBe(false);
    });

    it('422 "Not ACE-encodable." for a name no domain can have; 404 for a foreign domain', async () => {
      const r = await call(t.app, 'PATCH', '/domains/_acme-challenge.end1.example', {
        token: x.end1.token,
        body: { data: { type: 'domain', id: '_acme-challenge.end1.example', attributes: {} } },
      });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(errorBody('/domains/_acme-challenge.end1.example', 'invalid_api_data', 422, 'Invalid data', 'Not ACE-encodable.'));
      const f = await patch('solo.example', { type: 'domain', id: 'solo.example', attributes: { presence: { dns_update_lock: true } } });
      expect(f.status).toBe(404);
      expect(f.json).toEqual(errorBody('/domains/solo.example', 'resource_not_found', 404, 'Resource not found', 'No such domain.'));
      expect((await get('solo.example', x.solo.token)).json.data.attributes.presence.dns_update_lock).toBe(false);
    });
  });
});
