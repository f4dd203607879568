// GET /domains/{name} (API guide "Domains", "Compatibility with existing clients"): the whole
// document byte-exact, registration-only and IDN domains, names that are not ACE-encodable (422)
// and 404s.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { errorAt, useDomains } from '../../helpers/domains.js';

const LONG_253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
const LONG_254 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;

describe.each(ENGINES)('domains on %s', (engine) => {
  const { t, x, row, get } = useDomains(engine);

  it('GET /domains/{name} answers the whole document, compact, data first (API guide "Domains", "Compatibility with existing clients")', async () => {
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
          presence: { dns_update_lock: false, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } },
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

  it('a registration-only domain has presence null and no package (API guide "Domains")', async () => {
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
  ])('an IDN presence domain is found by %s; id is the ACE name (API guide "Domains")', async (_n, name) => {
    const r = await get(name);
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({
      type: 'domain',
      id: 'xn--bcher-kva.example',
      attributes: {
        name: 'bücher.example',
        name_ace: 'xn--bcher-kva.example',
        registration: null,
        presence: { dns_update_lock: false, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } },
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
    ['a space', 'a b.example'],
    ['254 characters', LONG_254],
    ['a 64-character label', `${'a'.repeat(64)}.example`],
  ])('GET with %s → 422 invalid_api_data "Not ACE-encodable." (API guide "Compatibility with existing clients")', async (_n, name) => {
    const url = `/domains/${encodeURIComponent(name)}`;
    const r = await call(t.app, 'GET', url, { token: x.end1.token });
    expect(r.status).toBe(422);
    expect(r.json).toEqual(errorAt(url, 'invalid_api_data', 422, 'Invalid data', 'Not ACE-encodable.'));
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
    ['a single label (acme.sh walks down to the TLD)', 'net'],
    ['a single label in capitals', 'NET'],
    ['a single label with the root dot', 'localhost.'],
    ['a single Unicode label', 'b%C3%BCcher'],
  ])('GET %s → 404 resource_not_found (API guide "Compatibility with existing clients")', async (_n, name) => {
    const url = `/domains/${name}`;
    const r = await call(t.app, 'GET', url, { token: x.end1.token });
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorAt(url, 'resource_not_found', 404, 'Resource not found', 'No such domain.'));
  });

  it("a reseller sees its end customers' domains", async () => {
    const r = await get('end2.example', x.reseller.token);
    expect(r.status).toBe(200);
    expect(r.json.data.relationships.owner).toEqual({ data: { type: 'customer', id: x.end2.customerId } });
  });
});
