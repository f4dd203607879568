// PATCH /domains/{name} (API guide "Documents", "Domains"): presence flags, partial updates of
// nested groups, 422/409/404 with nothing changed.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { errorAt, useDomains } from '../../helpers/domains.js';

describe.each(ENGINES)('domains on %s', (engine) => {
  const { t, x, get, patch } = useDomains(engine);

  describe('PATCH /domains/{name} (API guide "Documents", "Domains")', () => {
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
              presence: { dns_update_lock: true, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } },
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
      expect((await get('flags.example')).json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
    });

    it('updates nested groups partially: keys left out keep their value (API guide "Documents")', async () => {
      const a = await patch('flags.example', presence({ dns_migration_mode: { enabled: true } }));
      expect(a.status).toBe(200);
      expect(a.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
      const b = await patch('flags.example', presence({}));
      expect(b.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
      const c = await patch('flags.example', presence({ dns_migration_mode: {} }));
      expect(c.json.data.attributes.presence).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
      const d = await patch('flags.example', { type: 'domain', id: 'flags.example', attributes: {} });
      expect(d.status).toBe(200);
      const e = await patch('flags.example', presence({ dns_update_lock: false, dns_migration_mode: { enabled: false } }));
      expect(e.json.data.attributes.presence).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
      expect((await get('flags.example')).json.data.attributes.presence).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } });
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
        errorAt('/domains/registered-only.example', 'invalid_state', 409, 'Not allowed in the current state', 'This domain is not assigned to a presence; it has no presence flags to change.', {
          pointer: '/data/attributes/presence',
        }),
      );
      expect((await get('registered-only.example')).json).toEqual(before.json);
    });

    it('409 id_mismatch when data.id names another domain or data.type is wrong (API guide "Documents")', async () => {
      const r = await patch('flags.example', { type: 'domain', id: 'end1.example', attributes: { presence: { dns_update_lock: true } } });
      expect(r.status).toBe(409);
      expect(r.json).toEqual(
        errorAt('/domains/flags.example', 'id_mismatch', 409, 'Identifier mismatch', 'data.id must equal the identifier in the URL.', { pointer: '/data/id' }),
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
      expect(r.json).toEqual(errorAt('/domains/_acme-challenge.end1.example', 'invalid_api_data', 422, 'Invalid data', 'Not ACE-encodable.'));
      const f = await patch('solo.example', { type: 'domain', id: 'solo.example', attributes: { presence: { dns_update_lock: true } } });
      expect(f.status).toBe(404);
      expect(f.json).toEqual(errorAt('/domains/solo.example', 'resource_not_found', 404, 'Resource not found', 'No such domain.'));
      expect((await get('solo.example', x.solo.token)).json.data.attributes.presence.dns_update_lock).toBe(false);
    });
  });
});
