// 409 on POST /dns-records (API guide "DNS records", "Errors"; RFC 1034 §4.2.1, RFC 1035 §4.2.2):
// identical records, CNAME alone at its name, the managed DKIM name, delegations that would hide
// records, records being deleted, and the records of one name fitting in one DNS answer.
import { describe, expect, it } from 'vitest';
import { ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { conflictOn } from '../../helpers/errors.js';
import { HEX64, dnsRecordsSuite, recordIdOf, txt } from '../../helpers/dns-records.js';

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, row } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('conflicts (409, API guide "Errors")', () => {
    it('an identical record answers 409, however its data is written', async () => {
      expect((await post(txt('_dup', 'same'))).status).toBe(202);
      const r = await post(txt('_DUP', 'same'));
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflictOn('/dns-records', 'data', 'An identical TXT record exists at this name.'));
      // The same TXT text at another name, or another text at the name, is fine.
      expect((await post(txt('_dup2', 'same'))).status).toBe(202);
      expect((await post(txt('_dup', 'other'))).status).toBe(202);
      // MX written differently is the same record.
      expect((await post({ record_type: 'MX', name: 'mxdup', domain: 'end1.example', data: '10 mx.example.com' })).status).toBe(202);
      const mx = await post({ record_type: 'MX', name: 'MXDUP', domain: 'end1.example', data: '10   MX.Example.com.' });
      expect(mx.json).toEqual(conflictOn('/dns-records', 'data', 'An identical MX record exists at this name.'));
    });

    it('a CNAME with and without trailing dot is the same record (API guide "DNS records")', async () => {
      expect((await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'target.example.net.' })).status).toBe(202);
      const r = await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'target.example.net' });
      expect(r.json).toEqual(conflictOn('/dns-records', 'data', 'An identical CNAME record exists at this name.'));
    });

    it('a CNAME is alone at its name: no CNAME where records exist, no record where a CNAME exists', async () => {
      const r = await post({ record_type: 'CNAME', name: 'www', domain: 'end1.example', data: 'web.example.net' });
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflictOn('/dns-records', 'name', 'Other records exist at this name; a CNAME must be the only record at its name.'));
      const a = await post({ record_type: 'TXT', name: 'cn', domain: 'end1.example', data: 'x' });
      expect(a.json).toEqual(conflictOn('/dns-records', 'name', 'This name has a CNAME record; no other record may exist at it.'));
      const second = await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'other.example.net' });
      expect(second.json).toEqual(conflictOn('/dns-records', 'name', 'This name has a CNAME record; no other record may exist at it.'));
      // A wildcard is a name of its own.
      expect((await post({ record_type: 'CNAME', name: '*.cn', domain: 'end1.example', data: 'web.example.net' })).status).toBe(202);
    });

    it('the managed DKIM name takes no other record', async () => {
      for (const attrs of [txt('default._domainkey', 'v=DKIM1; k=rsa; p=AAAA'), { record_type: 'CNAME', name: 'default._domainkey', domain: 'end1.example', data: 'dkim.example.net' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflictOn('/dns-records', 'name', 'This name holds a record managed by the service (the DKIM key); no other record may be added at it.'));
      }
    });

    it('concurrent identical POSTs create one record', async () => {
      const rs = await Promise.all(Array.from({ length: 6 }, () => post(txt('_race', 'same-value'))));
      expect(rs.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409, 409]);
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', '=', '_race').execute();
      expect(rows.length).toBe(1);
    });
  });

  describe('delegations (NS below the apex) hide nothing (API guide "DNS records", RFC 1034 §4.2.1)', () => {
    const ns = (name: string, data = 'ns1.other.example') => ({ record_type: 'NS', name, domain: 'end1.example', data });
    /** Marks a record active and DELETEs it: it is then `deleting` until its job runs. */
    const deleting = async (id: string) => {
      await t.store.db.updateTable('dns_records').set({ state: 'active' }).where('id', '=', Number(id)).execute();
      expect((await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token })).status).toBe(202);
      expect((await row(id))?.state).toBe('deleting');
    };

    it('an NS above the managed DKIM key is refused (it would hide the undeletable record)', async () => {
      const r = await post(ns('_domainkey'));
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflictOn('/dns-records', 'name', 'A record managed by the service (the DKIM key) is below this name; an NS record would delegate it to other name servers and hide it.'));
      const at = await post(ns('default._domainkey'));
      expect(at.json).toEqual(conflictOn('/dns-records', 'name', 'This name holds a record managed by the service (the DKIM key); no other record may be added at it.'));
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', 'in', ['_domainkey', 'default._domainkey']).execute();
      expect(rows.length).toBe(1); // the DKIM key alone
    });

    it('an NS is refused where records other than NS/DS are at its name or any record is below it (wildcards too)', async () => {
      expect((await post(txt('hosted', 'v'))).status).toBe(202);
      expect((await post(ns('hosted'))).json).toEqual(
        conflictOn('/dns-records', 'name', 'Records other than NS and DS exist at this name; an NS record would delegate it to other name servers and hide them.'),
      );
      expect((await post(txt('_acme-challenge.deep.parent', 'v'))).status).toBe(202);
      for (const name of ['parent', 'deep.parent']) {
        expect((await post(ns(name))).json).toEqual(
          conflictOn('/dns-records', 'name', 'Records exist below this name (at "_acme-challenge.deep.parent"); an NS record would delegate them to other name servers and hide them.'),
        );
      }
      expect((await post({ record_type: 'A', name: '*.wild', domain: 'end1.example', data: '192.0.2.7' })).status).toBe(202);
      expect((await post(ns('wild'))).json).toEqual(
        conflictOn('/dns-records', 'name', 'Records exist below this name (at "*.wild"); an NS record would delegate them to other name servers and hide them.'),
      );
      // `_` is one character, not a LIKE wildcard: a record at y.aqb is not below a_b.
      expect((await post(txt('y.aqb', 'v'))).status).toBe(202);
      expect((await post(ns('a_b'))).status).toBe(202);
    });

    it('at a delegation only NS and DS may be added, below it nothing (wildcards too)', async () => {
      expect((await post(ns('cut'))).status).toBe(202);
      expect((await post(ns('cut', 'ns2.other.example'))).status).toBe(202);
      expect((await post({ record_type: 'DS', name: 'cut', domain: 'end1.example', data: `12345 13 2 ${HEX64}` })).status).toBe(202);
      for (const attrs of [txt('cut', 'v'), { record_type: 'MX', name: 'cut', domain: 'end1.example', data: '10 mx.example.net' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflictOn('/dns-records', 'name', 'An NS record delegates this name to other name servers; only NS and DS records may be added at it.'));
      }
      for (const attrs of [txt('_acme-challenge.cut', 'v'), { record_type: 'A', name: '*.cut', domain: 'end1.example', data: '192.0.2.8' }, ns('child.cut'), txt('a.b.cut', 'v')]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflictOn('/dns-records', 'name', 'This name is below "cut", which an NS record delegates to other name servers; no record may be added below a delegation.'));
      }
    });

    it('records being deleted count, and the detail says so', async () => {
      const id = recordIdOf(await post(ns('leaving')));
      await deleting(id);
      expect((await post(txt('leaving', 'v'))).json).toEqual(
        conflictOn('/dns-records', 'name', 'An NS record delegates this name to other name servers; only NS and DS records may be added at it. It is being deleted; try again when its job is done.'),
      );
      expect((await post(txt('x.leaving', 'v'))).json).toEqual(
        conflictOn('/dns-records', 'name', 'This name is below "leaving", which an NS record delegates to other name servers; no record may be added below a delegation. It is being deleted; try again when its job is done.'),
      );
      const below = recordIdOf(await post(txt('x.going', 'v')));
      await deleting(below);
      expect((await post(ns('going'))).json).toEqual(
        conflictOn('/dns-records', 'name', 'Records exist below this name (at "x.going"); an NS record would delegate them to other name servers and hide them. It is being deleted; try again when its job is done.'),
      );
    });
  });

  describe('the records of one name fit in one DNS answer (RFC 1035 §4.2.2)', () => {
    const sizeDetail = 'The records at this name would exceed 16384 bytes together (each counts its data plus 128 bytes), more than one DNS answer surely holds.';

    it('data of all types at a name count up to 16384 bytes, each record with 128 bytes more; deleting ones count too', async () => {
      const ids: string[] = [];
      for (const c of ['a', 'b', 'c']) ids.push(recordIdOf(await post(txt('_big', c.repeat(4096)))));
      expect((await post({ record_type: 'A', name: '_big', domain: 'end1.example', data: '192.0.2.1' })).status).toBe(202);
      // 3 × (4096 + 128) + (9 + 128) = 12809: 3447 bytes of data (+128) fill it exactly.
      const full = await post(txt('_big', 'd'.repeat(3447)));
      expect(full.status).toBe(202);
      for (const attrs of [txt('_big', 'e'), { record_type: 'AAAA', name: '_big', domain: 'end1.example', data: '2001:db8::1' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflictOn('/dns-records', 'data', sizeDetail));
      }
      // Another name has its own budget; identical records still say so first.
      expect((await post(txt('_big2', 'e'))).status).toBe(202);
      expect((await post(txt('_big', 'a'.repeat(4096)))).json).toEqual(conflictOn('/dns-records', 'data', 'An identical TXT record exists at this name.'));
      await t.store.db.updateTable('dns_records').set({ state: 'active' }).where('id', '=', Number(ids[0])).execute();
      expect((await call(t.app, 'DELETE', `/dns-records/${ids[0]}`, { token: x.end1.token })).status).toBe(202);
      expect((await post(txt('_big', 'e'))).json).toEqual(conflictOn('/dns-records', 'data', `${sizeDetail} Records being deleted count until their jobs are done.`));
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', '=', '_big').execute();
      expect(rows.length).toBe(5);
    });
  });
});
