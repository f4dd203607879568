// Authentication of /domain-availability (API guide "Authentication"): a token in both forms, and
// the reseller's legacy password, accepted here and nowhere else.
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { basic, WWW_AUTHENTICATE as WWW } from '../../helpers/auth.js';
import { LEGACY_PASSWORD, REASON, doc, result, unauthorized, useAvailability } from '../../helpers/domain-availability.js';
import { hashLegacyPassword } from '../../../src/auth/legacy-password.js';

describe.each(ENGINES)('domain-availability on %s', (engine) => {
  const { t, x, get } = useAvailability(engine);

  describe('authentication (API guide "Authentication")', () => {
    const url = '/domain-availability/end1.example';
    const answer = doc(url, result('end1.example', false, REASON.registered));

    it('a token works, in both forms', async () => {
      for (const authorization of [`token ${x.end2.token}`, basic('token', x.end2.token)]) {
        const r = await get(t, url, { headers: { authorization } });
        expect(r.status).toBe(200);
        expect(r.json).toEqual(answer);
      }
    });

    it("the reseller's legacy password (Basic, user = customer number) works here", async () => {
      const r = await get(t, url, { headers: { authorization: basic(x.reseller.customerId, LEGACY_PASSWORD) } });
      expect(r.status).toBe(200);
      expect(r.body).toBe(JSON.stringify(answer));
    });

    it('…and nowhere else: GET /customers with it → 401 with WWW-Authenticate', async () => {
      for (const path of ['/customers', `/customers/${x.reseller.customerId}`, '/domains/reseller.example']) {
        const r = await call(t.app, 'GET', path, { headers: { authorization: basic(x.reseller.customerId, LEGACY_PASSWORD) } });
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(unauthorized(path, 'Invalid credentials.'));
      }
    });

    it('wrong password, leading zeros, unknown customer, a non-reseller with a legacy hash, no header → 401', async () => {
      // A legacy hash on a non-reseller (the CLI refuses to set one; the check must not rely on that).
      await t.store.db
        .updateTable('customers')
        .set({ legacy_password_hash: await hashLegacyPassword(LEGACY_PASSWORD) })
        .where('id', '=', Number(x.solo.customerId))
        .execute();
      const cases: [string | undefined, string][] = [
        [basic(x.reseller.customerId, 'wrong-password-1234'), 'Invalid credentials.'],
        [basic(`0${x.reseller.customerId}`, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic(`00${x.reseller.customerId}`, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic('999999', LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic('999999999999999', LEGACY_PASSWORD), 'Invalid credentials.'], // past PostgreSQL's integer: still 401, never 500
        [basic(x.solo.customerId, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic(x.end1.customerId, LEGACY_PASSWORD), 'Invalid credentials.'],
        [`token ${x.end1.token}x`, 'Invalid or revoked API token.'],
        [undefined, 'Missing Authorization header.'],
      ];
      for (const [authorization, detail] of cases) {
        const r = await get(t, url, { headers: authorization ? { authorization } : {} });
        expect(r.status, authorization).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(unauthorized(url, detail));
      }
    });

    it('authentication comes before the name list is judged', async () => {
      const bad = '/domain-availability/_bad.test';
      const r = await get(t, bad, { headers: {} });
      expect(r.status).toBe(401);
      expect(r.json).toEqual(unauthorized(bad, 'Missing Authorization header.'));
    });
  });
});
