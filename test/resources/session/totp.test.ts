// Two-factor panel login (API guide "Panel sessions (extension)"; docs/decisions/0030-panel-sessions.md):
// the RFC 6238 reference codes; enrol → confirm → a login needs the code → a code is refused a
// second time → a recovery code works once → removal; the operator's `admin contact disable-totp`.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, processUrl } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';
import { errorBody } from '../../helpers/errors.js';
import { codeAt, logIn, loginBody, panelContact } from '../../helpers/panel.js';
import { runCli } from '../../helpers/cli.js';
import { base32, totpCode } from '../../../src/resources/session/session.totp.js';
import { secretBox, storeSealingKey } from '../../../src/security/secret-box.js';

const PW = 'panel password of end1';
const refused = errorBody('invalid_credentials', 401, 'Invalid credentials', 'Wrong e-mail address, password or code.', `${BASE}/session`);
const codeBody = (code: string) => ({ data: { type: 'totp-enrolment', attributes: { code } } });
const wrongCode = (self: string) =>
  errorBody('invalid_api_data', 422, 'Invalid data', 'This is not the current code of your authenticator app (or an unused recovery code).', `${BASE}${self}`, { pointer: '/data/attributes/code' });

describe('TOTP codes', () => {
  it("are RFC 6238's SHA-1 reference codes (their last 6 digits) for the reference secret", () => {
    const secret = base32(Buffer.from('12345678901234567890'));
    expect(secret).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    // T = 59, 1111111109, 1234567890, 2000000000 s → 94287082, 07081804, 89005924, 69279037.
    expect([59, 1111111109, 1234567890, 2000000000].map((s) => totpCode(secret, Math.floor(s / 30)))).toEqual(['287082', '081804', '005924', '279037']);
  });
});

describe.each(ENGINES)('two-factor panel login on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine);
  let secret = '';
  let recovery: string[] = [];
  /** The code the confirmation used (computed again later, a step boundary between would name another step). */
  let confirmedWith = '';

  it('enrol: 200 with the base32 secret and its otpauth URI, sealed at rest; a new POST replaces a pending one; the CSRF header is needed', async () => {
    await t.admin.customers.setPortalPassword(x.end1.contactId, PW);
    const b = await logIn(t.app, 'admin@end1.example', PW);
    expect((await call(t.app, 'POST', '/session/totp', { headers: b.cookieOnly })).status).toBe(403);
    const first = await call(t.app, 'POST', '/session/totp', { headers: b.headers });
    const r = await call(t.app, 'POST', '/session/totp', { headers: b.headers });
    expect(r.status, r.body).toBe(200);
    secret = r.json.data.attributes.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(secret).not.toBe(first.json.data.attributes.secret);
    expect(r.json).toEqual({
      data: {
        type: 'totp-enrolment', id: 'current',
        attributes: { secret, otpauth_uri: `otpauth://totp/hostplane:admin%40end1.example?secret=${secret}&issuer=hostplane&algorithm=SHA1&digits=6&period=30` },
        links: { self: `${BASE}/session/totp` },
      },
      links: { self: `${BASE}/session/totp` },
    });
    const rows = await t.store.db.selectFrom('contact_totp').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].secret).not.toContain(secret);
    expect(secretBox([], await storeSealingKey(t.store.db)).open(rows[0].secret)).toBe(secret);
    // Pending: a login still needs the password only.
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW) })).status).toBe(201);
  });

  it('confirm: a wrong code answers 422 on /data/attributes/code; a current one turns it on with ten recovery codes, shown once and stored hashed', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW);
    const wrong = await call(t.app, 'POST', '/session/totp/confirm', { headers: b.headers, body: codeBody(codeAt(secret, 5)) });
    expect(wrong.json).toEqual(wrongCode('/session/totp/confirm'));
    confirmedWith = codeAt(secret, -1);
    const r = await call(t.app, 'POST', '/session/totp/confirm', { headers: b.headers, body: codeBody(confirmedWith) });
    expect(r.status, r.body).toBe(200);
    recovery = r.json.data.attributes.recovery_codes;
    expect(r.json).toEqual({
      data: { type: 'totp-enrolment', id: 'current', attributes: { enabled: true, recovery_codes: recovery }, links: { self: `${BASE}/session/totp` } },
      links: { self: `${BASE}/session/totp/confirm` },
    });
    expect(recovery).toHaveLength(10);
    for (const c of recovery) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const stored = JSON.stringify(await t.store.db.selectFrom('contact_recovery_codes').selectAll().execute());
    for (const c of recovery) expect(stored).not.toContain(c);
    expect((await call(t.app, 'GET', '/session', { headers: b.cookieOnly })).json.data.attributes.totp_enabled).toBe(true);
    const again = await call(t.app, 'POST', '/session/totp', { headers: b.headers });
    expect(again.json).toEqual(errorBody('totp_already_enabled', 409, 'Two-factor login already enabled', 'Two-factor login is on already; turn it off first (DELETE /session/totp) to enrol another device.', `${BASE}/session/totp`));
  });

  it('a login then needs the code: 401 totp_required without it; a wrong or already used code gets invalid_credentials; a current one logs in once', async () => {
    const without = await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW) });
    expect(without.json).toEqual(errorBody('totp_required', 401, 'Two-factor code required', 'Two-factor login is on: send the code of your authenticator app (or a recovery code) as totp_code.', `${BASE}/session`));
    // The code the confirmation used, and a wrong password with a right code.
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, confirmedWith) })).json).toEqual(refused);
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', 'not the password', codeAt(secret)) })).json).toEqual(refused);
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, '000000x') })).json).toEqual(refused);
    const code = codeAt(secret);
    const ok = await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, code) });
    expect(ok.status, ok.body).toBe(201);
    expect(ok.json.data.attributes.totp_enabled).toBe(true);
    // The same code again (a replay): refused, also on another instance, the store decides.
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, code) })).json).toEqual(refused);
  });

  it('a recovery code logs in once (any letter case); the second time it is refused', async () => {
    const code = recovery[0];
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, ` ${code.toUpperCase()} `) })).status).toBe(201);
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW, code) })).json).toEqual(refused);
  });

  it('removal needs a current code or an unused recovery code (422 otherwise); then the password alone logs in', async () => {
    const b = await logIn(t.app, 'admin@end1.example', PW, recovery[1]);
    const body = (code: string) => ({ headers: b.headers, body: codeBody(code) });
    expect((await call(t.app, 'DELETE', '/session/totp', body(recovery[0]))).json).toEqual(wrongCode('/session/totp'));
    expect((await call(t.app, 'DELETE', '/session/totp', body('123'))).json).toEqual(wrongCode('/session/totp'));
    expect((await call(t.app, 'DELETE', '/session/totp', { headers: b.cookieOnly, body: codeBody(recovery[2]) })).status).toBe(403);
    const r = await call(t.app, 'DELETE', '/session/totp', body(recovery[2]));
    expect({ status: r.status, body: r.body }).toEqual({ status: 204, body: '' });
    expect(await t.store.db.selectFrom('contact_totp').selectAll().execute()).toEqual([]);
    expect(await t.store.db.selectFrom('contact_recovery_codes').selectAll().execute()).toEqual([]);
    expect((await call(t.app, 'POST', '/session', { body: loginBody('admin@end1.example', PW) })).status).toBe(201);
    const off = await call(t.app, 'DELETE', '/session/totp', body(codeAt(secret)));
    expect(off.json).toEqual(errorBody('invalid_state', 409, 'Not allowed in the current state', 'Two-factor login is not on.', `${BASE}/session/totp`));
  });

});

describe.each(ENGINES)('admin contact disable-totp on %s', { timeout: 60_000 }, (engine) => {
  it('the operator turns two-factor login off for a customer who lost the device; then the password alone logs in', async () => {
    const ts = await freshStore(engine);
    const t = await createTestApp(engine, {}, { store: ts });
    try {
      const { contactId } = await panelContact(t.admin, 'Lou', 'lou@lost.example', 'lou password here');
      const b = await logIn(t.app, 'lou@lost.example', 'lou password here');
      const s = (await call(t.app, 'POST', '/session/totp', { headers: b.headers })).json.data.attributes.secret as string;
      expect((await call(t.app, 'POST', '/session/totp/confirm', { headers: b.headers, body: codeBody(codeAt(s)) })).status).toBe(200);
      expect((await call(t.app, 'POST', '/session', { body: loginBody('lou@lost.example', 'lou password here') })).status).toBe(401);
      const env = { DATABASE_URL: processUrl(ts), LOG_LEVEL: 'silent' };
      const r = await runCli(['admin', 'contact', 'disable-totp', String(contactId)], env);
      expect(r).toEqual({ code: 0, stdout: `Turned off two-factor login of contact ${contactId}.\n`, stderr: '' });
      expect((await call(t.app, 'POST', '/session', { body: loginBody('lou@lost.example', 'lou password here') })).status).toBe(201);
      const again = await runCli(['admin', 'contact', 'disable-totp', String(contactId), '--json'], env);
      expect({ code: again.code, out: JSON.parse(again.stdout) }).toEqual({ code: 0, out: { id: String(contactId), totp_enabled: false } });
      const unknown = await runCli(['admin', 'contact', 'disable-totp', '999999'], env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('contact 999999');
    } finally {
      await t.close();
      await ts.drop();
    }
  });
});
