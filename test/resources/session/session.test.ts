// The customer panel's login through HTTP (API guide "Panel sessions (extension)";
// docs/decisions/0030-panel-sessions.md): the cookie a login sets, one answer for every wrong
// credential, the cookie standing for the contact's token (tenancy, Authorization winning), the
// anti-CSRF header on writes, logout, the idle and hard ends, and the sessions a new portal
// password or a deleted contact ends.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';
import { errorBody, notFoundAt } from '../../helpers/errors.js';
import { cookieOf, logIn, loginBody, panelContact } from '../../helpers/panel.js';
import { csrfTokenOf } from '../../../src/auth/panel-session.js';

const PW = 'panel password of end1';
const CHALLENGE = 'Cookie realm="panel", cookie-name="hostplane_session"';
const CLEAR = 'hostplane_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0';
const refused = errorBody('invalid_credentials', 401, 'Invalid credentials', 'Wrong e-mail address, password or code.', `${BASE}/session`);
const ended = (self: string) =>
  errorBody('unauthorized', 401, 'Authentication required', 'The panel session has ended or does not exist; log in again with POST /session.', `${BASE}${self}`);
const txt = (domain: string, name: string) => ({ data: { type: 'dns-record', attributes: { record_type: 'TXT', name, domain, data: `v-${name}` } } });

describe.each(ENGINES)('panel sessions on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine);
  const sessions = (contactId: number) => t.store.db.selectFrom('panel_sessions').selectAll().where('contact_id', '=', contactId).execute();

  it('set-up: end1 and the reseller get portal passwords', async () => {
    await t.admin.customers.setPortalPassword(x.end1.contactId, PW);
    await t.admin.customers.setPortalPassword(x.reseller.contactId, 'panel password of the reseller');
  });

  it('a login answers 201 with the HttpOnly SameSite=Strict cookie (no Secure over plain HTTP) and the session; only its hash is stored', async () => {
    const r = await call(t.app, 'POST', '/session', { body: loginBody('Admin@END1.example', PW) });
    expect(r.status, r.body).toBe(201);
    expect(r.headers['set-cookie']).toMatch(/^hostplane_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const cookie = cookieOf(r.headers['set-cookie']);
    expect(r.json).toEqual({
      data: {
        type: 'session',
        id: 'current',
        attributes: {
          contact_id: String(x.end1.contactId), customer_id: x.end1.customerId, email: 'admin@end1.example', name: 'end1 Admin', is_reseller: false,
          csrf_token: csrfTokenOf(cookie), totp_enabled: false, idle_timeout_s: 1800,
        },
        links: { self: `${BASE}/session` },
      },
      links: { self: `${BASE}/session` },
    });
    const rows = await t.store.db.selectFrom('panel_sessions').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(cookie);
    // GET /session answers the same document: the session's csrf token, not a new one.
    const again = await call(t.app, 'GET', '/session', { headers: { cookie: `hostplane_session=${cookie}` } });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(r.json);
  });

  it('a wrong password, an unknown address and a contact without portal password get one and the same 401 invalid_credentials; no cookie', async () => {
    for (const [email, password] of [['admin@end1.example', 'wrong password'], ['nobody@end1.example', PW], ['admin@end2.example', PW]]) {
      const r = await call(t.app, 'POST', '/session', { body: loginBody(email, password) });
      expect({ status: r.status, body: r.json, challenge: r.headers['www-authenticate'], cookie: r.headers['set-cookie'] }, email).toEqual({
        status: 401, body: refused, challenge: CHALLENGE, cookie: undefined,
      });
    }
  });

  it('a missing member of the login answers 422 with its pointer and changes nothing', async () => {
    const before = await t.store.db.selectFrom('panel_sessions').select('id').execute();
    const r = await call(t.app, 'POST', '/session', { body: { data: { type: 'session', attributes: { email: 'admin@end1.example' } } } });
    expect(r.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data', '"password" is required.', `${BASE}/session`, { pointer: '/data/attributes/password' }));
    expect(await t.store.db.selectFrom('panel_sessions').select('id').execute()).toEqual(before);
  });

  it("the cookie reads as the contact's token does: its own objects, another customer's answer 404; a reseller's session sees its end customers'", async () => {
    const end1 = await logIn(t.app, 'admin@end1.example', PW);
    for (const url of ['/domains', '/customers', '/packages', '/dns-records?filter[domain]=end1.example']) {
      const [bySession, byToken] = [await call(t.app, 'GET', url, { headers: end1.cookieOnly }), await call(t.app, 'GET', url, { token: x.end1.token })];
      expect(bySession.status, url).toBe(200);
      expect(bySession.body, url).toBe(byToken.body);
    }
    const foreign = await call(t.app, 'GET', '/domains/end2.example', { headers: end1.cookieOnly });
    expect(foreign.json).toEqual(notFoundAt(`${BASE}/domains/end2.example`, 'domain'));
    const reseller = await logIn(t.app, 'admin@reseller.example', 'panel password of the reseller');
    const domains = await call(t.app, 'GET', '/domains', { headers: reseller.cookieOnly });
    expect(domains.json.data.map((d: { id: string }) => d.id).sort()).toEqual(['end1.example', 'end2.example', 'reseller.example']);
  });

  it('a write with the cookie but without X-CSRF-Token (or with a wrong one) answers 403 csrf_token_invalid and changes nothing; with it, it works', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    const count = async () => (await t.store.db.selectFrom('dns_records').select('id').execute()).length;
    const before = await count();
    const csrfError = errorBody('csrf_token_invalid', 403, 'Anti-CSRF token missing or wrong', 'A write with the panel session cookie needs the header X-CSRF-Token with the csrf_token of GET /session.', `${BASE}/dns-records`, { header: 'X-CSRF-Token' });
    for (const headers of [b.cookieOnly, { ...b.cookieOnly, 'x-csrf-token': 'wrong' }, { ...b.cookieOnly, 'x-csrf-token': b.csrf.slice(1) }]) {
      const r = await call(t.app, 'POST', '/dns-records', { headers, body: txt('end1.example', 'forged') });
      expect(r.status).toBe(403);
      expect(r.json).toEqual(csrfError);
    }
    // Not even a body that is no JSON is read first.
    const raw = await call(t.app, 'POST', '/dns-records', { headers: { ...b.cookieOnly, 'content-type': 'text/plain' }, body: 'x' });
    expect(raw.json).toEqual(csrfError);
    expect(await count()).toBe(before);
    const ok = await call(t.app, 'POST', '/dns-records', { headers: b.headers, body: txt('end1.example', 'panel') });
    expect(ok.status, ok.body).toBe(202);
    expect(await count()).toBe(before + 1);
  });

  it('an Authorization header wins over the cookie: the token\'s caller, and no anti-CSRF header needed', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    const r = await call(t.app, 'GET', '/domains', { token: x.solo.token, headers: b.cookieOnly });
    expect(r.json.data.map((d: { id: string }) => d.id)).toEqual(['solo.example']);
    const w = await call(t.app, 'POST', '/dns-records', { token: x.solo.token, headers: b.cookieOnly, body: txt('solo.example', 'tok') });
    expect(w.status, w.body).toBe(202);
    // A wrong token is refused as a token, whatever the cookie.
    expect((await call(t.app, 'GET', '/domains', { token: 'hp_wrong', headers: b.cookieOnly })).headers['www-authenticate']).toBe('Basic realm="API"');
    // GET /session with a token only: no session.
    const s = await call(t.app, 'GET', '/session', { token: x.end1.token });
    expect(s.status).toBe(401);
    expect(s.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it('without a cookie GET /session answers 401 unauthorized with the panel challenge (no Basic dialog in a browser)', async () => {
    const r = await call(t.app, 'GET', '/session');
    expect({ status: r.status, body: r.json, challenge: r.headers['www-authenticate'] }).toEqual({
      status: 401, body: errorBody('unauthorized', 401, 'Authentication required', 'No panel session; log in with POST /session.', `${BASE}/session`), challenge: CHALLENGE,
    });
  });

  it('logout: 204 clearing the cookie, the row gone; the cookie then answers 401 and is cleared again', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    const noCsrf = await call(t.app, 'DELETE', '/session', { headers: b.cookieOnly });
    expect(noCsrf.status).toBe(403);
    const r = await call(t.app, 'DELETE', '/session', { headers: b.headers });
    expect({ status: r.status, body: r.body, cookie: r.headers['set-cookie'] }).toEqual({ status: 204, body: '', cookie: CLEAR });
    const after = await call(t.app, 'GET', '/domains', { headers: b.cookieOnly });
    expect({ status: after.status, body: after.json, cookie: after.headers['set-cookie'], challenge: after.headers['www-authenticate'] }).toEqual({
      status: 401, body: ended('/domains'), cookie: CLEAR, challenge: CHALLENGE,
    });
  });

  it('idle: a session unused for PANEL_SESSION_IDLE_S ends; its last use is noted at most once a minute; the hard end PANEL_SESSION_MAX_S ends it in any case', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    const [row] = (await sessions(x.end1.contactId)).slice(-1);
    const setRow = (values: { last_used_at?: string; expires_at?: string }) => t.store.db.updateTable('panel_sessions').set(values).where('id', '=', row.id).execute();
    const lastUsed = async () => (await t.store.db.selectFrom('panel_sessions').select('last_used_at').where('id', '=', row.id).executeTakeFirstOrThrow()).last_used_at;
    // Used 30 s ago: a request notes nothing.
    const recent = new Date(Date.now() - 30_000).toISOString();
    await setRow({ last_used_at: recent });
    expect((await call(t.app, 'GET', '/session', { headers: b.cookieOnly })).status).toBe(200);
    expect(await lastUsed()).toBe(recent);
    // Used 29 minutes ago: still on, and now noted.
    await setRow({ last_used_at: new Date(Date.now() - 29 * 60_000).toISOString() });
    expect((await call(t.app, 'GET', '/session', { headers: b.cookieOnly })).status).toBe(200);
    expect(Date.now() - Date.parse(await lastUsed())).toBeLessThan(10_000);
    // Idle for 30 minutes: ended.
    await setRow({ last_used_at: new Date(Date.now() - 1800_000 - 1000).toISOString() });
    expect((await call(t.app, 'GET', '/session', { headers: b.cookieOnly })).json).toEqual(ended('/session'));
    // In use, but past its hard end: ended.
    const c = await logIn(t.app, 'admin@end1.example', PW);
    const [row2] = (await sessions(x.end1.contactId)).slice(-1);
    expect(Date.parse(row2.expires_at) - Date.parse(row2.created_at)).toBe(43_200_000);
    await t.store.db.updateTable('panel_sessions').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('id', '=', row2.id).execute();
    expect((await call(t.app, 'GET', '/domains', { headers: c.cookieOnly })).json).toEqual(ended('/domains'));
  });

  it("setting the portal password again ends the contact's sessions at once", async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    expect((await sessions(x.end1.contactId)).length).toBeGreaterThan(0);
    await t.admin.customers.setPortalPassword(x.end1.contactId, PW);
    expect(await sessions(x.end1.contactId)).toEqual([]);
    expect((await call(t.app, 'GET', '/session', { headers: b.cookieOnly })).json).toEqual(ended('/session'));
  });

  it("deleting the contact ends its sessions at once; a customer whose login is disabled cannot log in and its sessions end", async () => {
    const { contactId } = await t.admin.customers.createContact(Number(x.solo.customerId), { name: 'Second', email: 'second@solo.example' });
    await t.admin.customers.setPortalPassword(contactId, 'second contact password');
    const b = await logIn(t.app, 'second@solo.example', 'second contact password');
    await t.admin.customers.deleteContact(contactId);
    expect(await sessions(contactId)).toEqual([]);
    expect((await call(t.app, 'GET', '/domains', { headers: b.cookieOnly })).json).toEqual(ended('/domains'));

    const e1 = await logIn(t.app, 'admin@end1.example', PW);
    const patch = (value: boolean) => call(t.app, 'PATCH', `/customers/${x.end1.customerId}`, {
      token: x.reseller.token, body: { data: { type: 'customer', id: x.end1.customerId, attributes: { is_login_disabled: value } } },
    });
    expect((await patch(true)).status).toBe(200);
    expect((await call(t.app, 'GET', '/session', { headers: e1.cookieOnly })).json).toEqual(ended('/session'));
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW) })).json).toEqual(refused);
    expect((await patch(false)).status).toBe(200);
  });
});

describe.each(ENGINES)('panel session cookie behind TLS on %s', (engine) => {
  it('Secure only when the request came over TLS: X-Forwarded-Proto counts from a trusted proxy (TRUST_PROXY), not from anyone', async () => {
    for (const [env, secure] of [[{ TRUST_PROXY: '127.0.0.1' }, true], [{}, false]] as const) {
      const t = await createTestApp(engine, env);
      try {
        await panelContact(t.admin, 'Tess', 'tess@tls.example', 'tess password here');
        const r = await call(t.app, 'POST', '/session', { body: loginBody('tess@tls.example', 'tess password here'), headers: { 'x-forwarded-proto': 'https' } });
        expect(r.status).toBe(201);
        expect(String(r.headers['set-cookie']).endsWith('; Secure'), JSON.stringify(env)).toBe(secure);
      } finally {
        await t.close();
      }
    }
  });
});
