// DELETE /dns-records/{id} (API guide "DNS records", "Compatibility with existing clients"): 202
// with the delete job, pending records gone at once, active ones `deleting` until their job runs,
// the managed DKIM record not deletable, and acme.sh's `//dns-records/<id>` with an empty JSON
// body.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { conflictOn, errorBody, notFoundAt } from '../../helpers/errors.js';
import { dnsRecordsSuite, jobBody, record, recordIdOf, txt } from '../../helpers/dns-records.js';

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, get, row, idsOf } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('DELETE /dns-records/{id} (API guide "Compatibility with existing clients", "DNS records")', () => {
    it('deleting a pending record: 202 with the job, the record is gone at once (it was never served)', async () => {
      const created = await post(txt('_del-pending', 'v'));
      const id = recordIdOf(created);
      const r = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(r.status).toBe(202);
      expect(r.headers['content-location']).toBe(`${BASE}/queue-jobs/${r.json.data.id}`);
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}/dns-records/${id}`));
      expect(r.json.data.id).not.toBe(created.json.data.id);
      expect(await row(id)).toBeUndefined();
      expect((await get(id)).status).toBe(404);
    });

    it('deleting an active record marks it deleting (still listed and served) until its job runs; a second DELETE answers the same job', async () => {
      const id = (await idsOf('end1.example'))['AAAA www'];
      const r = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(r.status).toBe(202);
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}/dns-records/${id}`));
      expect((await row(id))?.state).toBe('deleting');
      expect((await get(id)).json.data).toEqual(record(id, { record_type: 'AAAA', name: 'www', domain: 'end1.example', data: '2001:db8::10', tag: 'base' }));
      const again = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(again.status).toBe(202);
      expect(again.body).toBe(r.body);
      // Re-creating it before the job has run is a conflict that says why.
      const re = await post({ record_type: 'AAAA', name: 'www', domain: 'end1.example', data: '2001:db8::10' });
      expect(re.json).toEqual(conflictOn('/dns-records', 'data', 'An identical AAAA record exists at this name. It is being deleted; try again when its job is done.'));
    });

    it('base records are deletable; the managed DKIM record answers 403 record_not_deletable', async () => {
      const ids = await idsOf('end2.example');
      expect((await call(t.app, 'DELETE', `/dns-records/${ids['TXT ']}`, { token: x.end2.token })).status).toBe(202);
      for (const token of [x.end2.token, x.reseller.token]) {
        const r = await call(t.app, 'DELETE', `/dns-records/${ids['TXT default._domainkey']}`, { token });
        expect(r.status).toBe(403);
        expect(r.json).toEqual(
          errorBody(
            'record_not_deletable',
            403,
            'Record cannot be deleted',
            'This record is managed by the service (e.g. the DKIM key) and cannot be deleted.',
            `${BASE}/dns-records/${ids['TXT default._domainkey']}`,
          ),
        );
      }
      expect((await row(ids['TXT default._domainkey']))?.state).toBe('active');
    });

    it('acme.sh: DELETE //dns-records/<id> with a JSON Content-Type and an empty body (API guide "Compatibility with existing clients")', async () => {
      const id = recordIdOf(await post(txt('_acme-challenge.www', 'acme-sh-value')));
      const r = await call(t.app, 'DELETE', `//dns-records/${id}`, {
        token: x.end1.token,
        headers: { 'content-type': 'application/vnd.api+json', accept: 'application/vnd.hostplane.v1+json' },
        body: '',
      });
      expect(r.status).toBe(202);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}//dns-records/${id}`));
    });

    it('unknown ids answer 404', async () => {
      const r = await call(t.app, 'DELETE', '/dns-records/987654', { token: x.end1.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFoundAt(`${BASE}/dns-records/987654`, 'dns-record'));
    });
  });
});
