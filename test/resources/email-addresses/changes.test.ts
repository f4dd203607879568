// Changes to /email-addresses through HTTP on both engines, without a mail server (API guide
// "E-mail addresses", "Password rules", "Filters and paging"): PATCH and its rules, passwords,
// forward targets, application passwords and their last use, DELETE, list filters and tenancy, and
// no plaintext password anywhere. Creating addresses: rules.test.ts.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { GOOD_PASSWORD, patchEmail, postAppPassword, postEmail } from '../../helpers/email.js';
import { mailReportKey } from '../../../src/provisioning/mail/servers.repository.js';
import { useEmailSuite } from '../../helpers/email-suite.js';

const GENERATED = /^[A-Za-z0-9][A-Za-z0-9._-]{18}[A-Za-z0-9]$/;
const ORDER = ['address', 'address_ace', 'address_type', 'description', 'antispam', 'forward_to', 'autoresponder', 'quota', 'created_at'];

describe.each(ENGINES)('changes to /email-addresses on %s', { timeout: 60_000 }, (engine) => {
  const { t, x, store, secrets, token, domain, local, directory, verifies, mailbox, expectNoPlaintext } = useEmailSuite(engine);

  it('PATCH → 200: description, antispam, one autoresponder key at a time; the rules of each (API guide "E-mail addresses")', async () => {
    const r = await mailbox();
    const id = r.json.data.id;
    const p = await patchEmail(t, token(), id, { description: null, antispam: 'junk-folder', autoresponder: { text: 'Away until Monday.' } });
    expect(p.status, p.body).toBe(200);
    const { password: _pw, ...attrs } = r.json.data.attributes;
    expect(p.json).toEqual({
      data: { ...r.json.data, attributes: { ...attrs, description: null, antispam: 'junk-folder', autoresponder: { text: 'Away until Monday.', active: false, activates: null, expires: null } },
        links: { self: `${BASE}/email-addresses/${id}` } },
      links: { self: `${BASE}/email-addresses/${id}` },
    });
    const tomorrow = new Date(Date.now() + 36 * 3600_000).toISOString().slice(0, 10);
    const later = new Date(Date.now() + 10 * 86400_000).toISOString().slice(0, 10);
    for (const [key, value] of [['active', true], ['activates', tomorrow], ['expires', later]] as const) {
      const s = await patchEmail(t, token(), id, { autoresponder: { [key]: value } });
      expect(s.json.data.attributes.autoresponder[key], key).toEqual(value);
    }
    expect((await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() })).json.data.attributes.autoresponder)
      .toEqual({ text: 'Away until Monday.', active: true, activates: tomorrow, expires: later });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ autoresponder: { text: 'a', active: true } }, 'autoresponder', 'Change exactly one of autoresponder.text, .active, .activates, .expires per request.'],
      [{ autoresponder: {} }, 'autoresponder', 'Change exactly one of autoresponder.text, .active, .activates, .expires per request.'],
      [{ autoresponder: { subject: 'x' } }, 'autoresponder/subject', 'autoresponder has no subject; it has text, active, activates, expires.'],
      [{ autoresponder: { active: 'yes' } }, 'autoresponder/active', 'autoresponder.active must be true or false.'],
      [{ autoresponder: { activates: '2026-02-30' } }, 'autoresponder/activates', 'autoresponder.activates must be a date YYYY-MM-DD or null.'],
      [{ autoresponder: { activates: '2020-01-01' } }, 'autoresponder/activates', expect.stringMatching(/^autoresponder.activates must not be in the past \(today is \d{4}-\d{2}-\d{2} in Germany\)\.$/) as unknown as string],
      [{ autoresponder: { activates: new Date(Date.now() + 20 * 86400_000).toISOString().slice(0, 10) } }, 'autoresponder/activates', expect.stringMatching(/must not be before autoresponder.activates/) as unknown as string],
      [{ address: 'new@x.example' }, 'address', 'address cannot be changed; create a new address instead.'],
      [{ address_type: 'forward' }, 'address_type', 'address_type cannot be changed; create a new address instead.'],
      [{ forward_to: ['a@b.example'] }, 'forward_to', 'forward_to changes one address at a time: POST or DELETE /email-addresses/{id}/forward-to/{address}.'],
      [{ antispam: 'sometimes' }, 'antispam', 'antispam must be one of reject, junk-folder, subject-rewrite, none.'],
    ];
    for (const [attributes, field, detail] of cases) {
      const e = await patchEmail(t, token(), id, attributes);
      expect(e.json, JSON.stringify(attributes)).toEqual(invalidAttribute(`/email-addresses/${id}`, field, detail));
    }
    // Dates back to null remove the scheduled changes (API guide "E-mail addresses").
    await patchEmail(t, token(), id, { autoresponder: { activates: null } });
    const cleared = await patchEmail(t, token(), id, { autoresponder: { expires: null } });
    expect(cleared.json.data.attributes.autoresponder).toEqual({ text: 'Away until Monday.', active: true, activates: null, expires: null });
    const mismatch = await call(t.app, 'PATCH', `/email-addresses/${id}`, { token: token(), body: { data: { type: 'email-address', id: '999', attributes: {} } } });
    expect(mismatch.status).toBe(409);
    expect(mismatch.json.errors[0].id).toBe('id_mismatch');
  });

  it('PATCH password: the directory verifies the new one only; forwards have none (422) (API guide "E-mail addresses", "Password rules")', async () => {
    const r = await mailbox();
    const a = r.json.data.attributes.address_ace;
    const p = await patchEmail(t, token(), r.json.data.id, { password: GOOD_PASSWORD });
    expect(p.status).toBe(200);
    expect(p.body).not.toContain(GOOD_PASSWORD);
    expect(p.json.data.attributes.password).toBeUndefined();
    expect(await verifies(a, GOOD_PASSWORD)).toBe(true);
    expect(await verifies(a, r.json.data.attributes.password)).toBe(false);
    const weak = await patchEmail(t, token(), r.json.data.id, { password: 'short' });
    expect(weak.status).toBe(422);
    expect(new Set(weak.json.errors.map((e: any) => e.id))).toEqual(new Set(['invalid_password']));
    expect(weak.json.errors.map((e: any) => e.detail)).toEqual(expect.arrayContaining(['The password must be at least 16 characters long.']));
    const long = await patchEmail(t, token(), r.json.data.id, { password: `${GOOD_PASSWORD}${'Kx7#'.repeat(14)}` });
    expect(long.json).toEqual(errorBody('invalid_password', 422, 'Invalid password', 'The password must be at most 72 characters long.', `${BASE}/email-addresses/${r.json.data.id}`, { pointer: '/data/attributes/password' }));
    expect(await verifies(a, GOOD_PASSWORD)).toBe(true);
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fp = await patchEmail(t, token(), f.json.data.id, { password: GOOD_PASSWORD });
    expect(fp.json).toEqual(invalidAttribute(`/email-addresses/${f.json.data.id}`, 'password', 'Only a mailbox has a password; a forward logs in nowhere.'));
    const fa = await patchEmail(t, token(), f.json.data.id, { autoresponder: { active: true } });
    expect(fa.json).toEqual(invalidAttribute(`/email-addresses/${f.json.data.id}`, 'autoresponder', 'Only a mailbox has an autoresponder.'));
  });

  it('POST …/password → 200 with a new generated password; the old one no longer verifies; 409 for a forward (API guide "E-mail addresses")', async () => {
    const r = await mailbox();
    const id = r.json.data.id;
    const p = await call(t.app, 'POST', `/email-addresses/${id}/password`, { token: token() });
    expect(p.status).toBe(200);
    const password = p.json.data.attributes.password;
    secrets.push(password);
    expect(password).toMatch(GENERATED);
    expect(password).not.toBe(r.json.data.attributes.password);
    expect(p.headers['content-location']).toBeUndefined();
    expect(p.json.data.links).toEqual({ self: `${BASE}/email-addresses/${id}` });
    expect(Object.keys(p.json.data.attributes)).toEqual([...ORDER, 'password']);
    expect(await verifies(r.json.data.attributes.address_ace, password)).toBe(true);
    expect(await verifies(r.json.data.attributes.address_ace, r.json.data.attributes.password)).toBe(false);
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fp = await call(t.app, 'POST', `/email-addresses/${f.json.data.id}/password`, { token: token() });
    expect(fp.json).toEqual(errorBody('invalid_state', 409, 'Not allowed in the current state', 'A forward has no password; only mailboxes do.', `${BASE}/email-addresses/${f.json.data.id}/password`));
  });

  it('forward-to: add (204, once), remove (204), unknown target 404, a forward keeps its last one (409); alias rows follow (API guide "E-mail addresses")', async () => {
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const id = f.json.data.id;
    const a = f.json.data.attributes.address_ace;
    const add = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/${encodeURIComponent('sales+eu@b.example')}`, { token: token() });
    expect([add.status, add.body]).toEqual([204, '']);
    const raw = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/sales+eu@B.example`, { token: token() });
    expect(raw.status).toBe(204);
    const g = await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() });
    expect(g.json.data.attributes.forward_to).toEqual(['a@b.example', 'sales+eu@b.example']);
    expect((await directory(a)).aliases).toEqual(['a@b.example', 'sales+eu@b.example']);
    const bad = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/nonsense`, { token: token() });
    expect(bad.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data', 'nonsense is not an e-mail address.', `${BASE}/email-addresses/${id}/forward-to/nonsense`, { parameter: 'target' }));
    for (const target of [a, a.replace('@', '+x@')]) {
      const self = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/${target}`, { token: token() });
      expect(self.json.errors[0], target).toMatchObject({ id: 'invalid_api_data', detail: 'An address cannot forward to itself.' });
    }
    const del = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/a@b.example`, { token: token() });
    expect(del.status).toBe(204);
    const missing = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/a@b.example`, { token: token() });
    expect(missing.json).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'a@b.example is not a forwarding target of this address.', `${BASE}/email-addresses/${id}/forward-to/a@b.example`));
    const last = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/sales%2Beu@b.example`, { token: token() });
    expect(last.json.errors[0]).toMatchObject({ id: 'invalid_state', status: '409', detail: 'A forward needs at least one target: add another first, or delete the forward.' });
    expect((await directory(a)).aliases).toEqual(['sales+eu@b.example']);
    // A mailbox's targets: its own row appears with the first and goes with the last.
    const m = await mailbox();
    const ma = m.json.data.attributes.address_ace;
    await call(t.app, 'POST', `/email-addresses/${m.json.data.id}/forward-to/c@d.example`, { token: token() });
    expect((await directory(ma)).aliases).toEqual(['c@d.example', ma].sort());
    expect((await call(t.app, 'DELETE', `/email-addresses/${m.json.data.id}/forward-to/c@d.example`, { token: token() })).status).toBe(204);
    expect((await directory(ma)).aliases).toEqual([]);
  });

  it('application passwords: 201 with the password once, the list without it, DELETE 204 then 404; only mailboxes (API guide "E-mail addresses")', async () => {
    const m = await mailbox();
    const id = m.json.data.id;
    const r = await postAppPassword(t, token(), id, { device: 'Laptop', application: 'Thunderbird' });
    expect(r.status, r.body).toBe(201);
    const password = r.json.data.attributes.password;
    secrets.push(password);
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    const appId = r.json.data.id;
    expect(r.json).toEqual({
      data: { type: 'application-password', id: expect.stringMatching(/^[0-9]+$/), attributes: { device: 'Laptop', application: 'Thunderbird', password, created_at: expect.any(String) },
        links: { self: `${BASE}/email-addresses/${id}/application-passwords/${appId}` } },
      links: { self: `${BASE}/email-addresses/${id}/application-passwords` },
    });
    const row = await t.store.db.selectFrom('mail_app_passwords').selectAll().where('id', '=', Number(appId)).executeTakeFirstOrThrow();
    expect(row.secret_sha256).toBe(crypto.createHash('sha256').update(password).digest('hex'));
    const l = await call(t.app, 'GET', `/email-addresses/${id}/application-passwords`, { token: token() });
    expect(l.json).toEqual({
      links: { self: `${BASE}/email-addresses/${id}/application-passwords` },
      data: [{ type: 'application-password', id: appId, attributes: { device: 'Laptop', application: 'Thunderbird', created_at: r.json.data.attributes.created_at, last_used_at: null },
        links: { self: `${BASE}/email-addresses/${id}/application-passwords/${appId}` } }],
      meta: { total: 1 },
    });
    for (const [attributes, field, detail] of [
      [{ device: '', application: 'x' }, 'device', 'device must be a non-empty text.'],
      [{ device: 'x', application: '  ' }, 'application', 'application must be a non-empty text.'],
      [{ device: 'x'.repeat(256), application: 'x' }, 'device', 'device must be at most 255 characters.'],
    ] as const) {
      const e = await postAppPassword(t, token(), id, attributes);
      expect(e.json).toEqual(invalidAttribute(`/email-addresses/${id}/application-passwords`, field, detail));
    }
    const d = await call(t.app, 'DELETE', `/email-addresses/${id}/application-passwords/${appId}`, { token: token() });
    expect([d.status, d.body]).toEqual([204, '']);
    const again = await call(t.app, 'DELETE', `/email-addresses/${id}/application-passwords/${appId}`, { token: token() });
    expect(again.json).toEqual(notFoundAt(`${BASE}/email-addresses/${id}/application-passwords/${appId}`, 'application-password'));
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fa = await postAppPassword(t, token(), f.json.data.id, { device: 'x', application: 'y' });
    expect(fa.json.errors[0]).toMatchObject({ id: 'invalid_state', status: '409' });
  });

  it('last_used_at: set by a mail server\'s login report (the key derived from its doveadm key), not by a failed login, a wrong key or another address', async () => {
    const m = await mailbox();
    const id = m.json.data.id;
    const a = await postAppPassword(t, token(), id, { device: 'Phone', application: 'Mail' });
    secrets.push(a.json.data.attributes.password);
    const report = (key: string, body: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST', url: '/internal/mail-auth-report?command=report',
        headers: { 'content-type': 'application/json', 'x-hostplane-mail-key': key }, payload: body,
      });
    const used = async () => (await call(t.app, 'GET', `/email-addresses/${id}/application-passwords`, { token: token() })).json.data[0].attributes.last_used_at;
    const login = m.json.data.attributes.address_ace;
    const other = (await mailbox()).json.data.attributes.address_ace;
    for (const [key, body] of [
      ['wrong-key', { login, app_password_id: a.json.data.id, success: true }],
      // The doveadm key itself is not the report key.
      ['not-used', { login, app_password_id: a.json.data.id, success: true }],
      [mailReportKey('not-used'), { login, app_password_id: a.json.data.id, success: false }],
      [mailReportKey('not-used'), { login: other, app_password_id: a.json.data.id, success: true }],
      [mailReportKey('not-used'), { login, app_password_id: '', success: true }],
    ] as const) {
      const r = await report(key, body);
      expect([r.statusCode, r.json()]).toEqual([200, { status: 0 }]);
      expect(await used(), JSON.stringify(body)).toBeNull();
    }
    await report(mailReportKey('not-used'), { login: login.toUpperCase(), app_password_id: a.json.data.id, success: true, policy_reject: false, tls: false });
    expect(Date.parse(await used())).toBeGreaterThan(Date.now() - 60_000);
  });

  it('DELETE → 202 with the job; the directory entry is inactive at once; a repeated DELETE answers the same job; writes then → 409 (API guide "E-mail addresses")', async () => {
    const m = await mailbox({ forward_to: ['keep@other.example'] });
    const id = m.json.data.id;
    const a = m.json.data.attributes.address_ace;
    const d = await call(t.app, 'DELETE', `/email-addresses/${id}`, { token: token() });
    expect(d.status).toBe(202);
    expect(d.json.data).toMatchObject({ type: 'queue-job', attributes: { job_type: 'email-address', status: 'pending', action: 'delete' } });
    expect(d.headers['content-location']).toBe(`${BASE}/queue-jobs/${d.json.data.id}`);
    const dir = await directory(a);
    expect(dir.user?.active).toBe(0);
    expect(dir.aliases).toEqual([]);
    const again = await call(t.app, 'DELETE', `/email-addresses/${id}`, { token: token() });
    expect(again.json.data.id).toBe(d.json.data.id);
    const p = await patchEmail(t, token(), id, { description: 'x' });
    expect(p.json.errors[0]).toMatchObject({ id: 'invalid_state', detail: 'This address is being deleted.' });
    const reuse = await postEmail(t, token(), { address: a, address_type: 'mailbox' });
    expect(reuse.status).toBe(409);
  });

  it('list filters: package_id, address (repeat, commas, any case), domain; paging; tenancy (404 outside the scope) (API guide "Filters and paging")', async () => {
    const a = (await mailbox()).json.data;
    const b = (await mailbox()).json.data;
    const q = (s: string) => call(t.app, 'GET', `/email-addresses?${s}`, { token: token() });
    const A = a.attributes.address.toUpperCase().replace(domain().toUpperCase(), domain());
    expect((await q(`filter[address]=${A},${b.attributes.address}`)).json.data.map((d: any) => d.id)).toEqual([a.id, b.id]);
    expect((await q(`filter[address]=${A}&filter[address]=${b.attributes.address}`)).json.meta.total).toBe(2);
    expect((await q(`filter[address]=${A}&filter[domain]=${x.end2.domain}`)).json.meta.total).toBe(0);
    expect((await q(`filter[package_id]=${x.end2.packageId}`)).json.meta.total).toBe(0);
    expect((await q('filter[address]=nonsense')).json.meta.total).toBe(0);
    const paged = await q(`filter[package_id]=${x.end1.packageId}&page[size]=1&page[number]=1`);
    expect(paged.json.data).toHaveLength(1);
    expect(paged.json.meta.page).toMatchObject({ number: 1, size: 1 });
    const unknown = await q('filter[owner]=1');
    expect(unknown.status).toBe(400);
    // end2 (another customer of the same reseller) sees none of it; the reseller sees it.
    for (const path of [`/email-addresses/${a.id}`, `/email-addresses/${a.id}/application-passwords`]) {
      const r = await call(t.app, 'GET', path, { token: x.end2.token });
      expect(r.json, path).toEqual(notFoundAt(`${BASE}${path}`, 'email-address'));
    }
    expect((await call(t.app, 'GET', '/email-addresses', { token: x.end2.token })).json.meta.total).toBe(0);
    expect((await call(t.app, 'GET', `/email-addresses/${a.id}`, { token: x.reseller.token })).status).toBe(200);
  });

  it('no plaintext password in any table or job payload (generated, chosen, application passwords)', () => expectNoPlaintext([GOOD_PASSWORD]));
});
