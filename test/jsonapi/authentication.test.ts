// Authentication against /customers (API guide "Authentication"): token and Basic forms,
// 401 with WWW-Authenticate, revoked tokens and deleted contacts, authentication before the body.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { basic, WWW_AUTHENTICATE as WWW } from '../helpers/auth.js';
import { customer, errorDoc, useHttpCore } from '../helpers/http-core.js';

const UNAUTHORIZED = (detail: string) => ({ id: 'unauthorized', status: '401', title: 'Authentication required', detail });

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { t, x, resellerList } = useHttpCore(engine);

  describe('authentication (API guide "Authentication")', () => {
    it('token T, Token T and Basic token:T all authenticate', async () => {
      for (const authorization of [`token ${x.reseller.token}`, `Token ${x.reseller.token}`, basic('token', x.reseller.token), `basic ${Buffer.from(`token:${x.reseller.token}`).toString('base64')}`]) {
        const r = await call(t.app, 'GET', '/customers', { headers: { authorization } });
        expect(r.status, authorization.slice(0, 6)).toBe(200);
        expect(r.json).toEqual(resellerList);
      }
    });

    it.each([
      ['missing', undefined, 'Missing Authorization header.'],
      ['unknown token', 'token hp_not_a_real_token', 'Invalid or revoked API token.'],
      ['empty Basic password', basic('token', ''), 'Invalid or revoked API token.'],
      ['Bearer scheme', 'Bearer hp_abc', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['scheme only', 'token', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic without colon', 'Basic ' + Buffer.from('tokenonly').toString('base64'), 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic garbage', 'Basic !!!', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic other user', basic('admin', 'secret'), 'Invalid credentials.'],
    ])('%s → 401 unauthorized with WWW-Authenticate', async (_name, authorization, detail) => {
      const r = await call(t.app, 'GET', '/customers', { headers: authorization ? { authorization } : {} });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED(detail)));
    });

    it('the reseller\'s legacy password is refused on /customers (API guide "Authentication")', async () => {
      await t.admin.customers.setLegacyPassword(Number(x.reseller.customerId), 'legacy-password-1234');
      const r = await call(t.app, 'GET', '/customers', { headers: { authorization: basic(x.reseller.customerId, 'legacy-password-1234') } });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid credentials.')));
    });

    it('authentication comes before the body: PATCH without token and with a broken body → 401', async () => {
      const id = x.end1.customerId;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { body: '{broken', headers: { 'content-type': 'text/plain' } });
      expect(r.status).toBe(401);
      expect(r.json).toEqual(errorDoc(`/customers/${id}`, UNAUTHORIZED('Missing Authorization header.')));
    });

    it('a revoked token → 401 at once', async () => {
      const { tokenId, token } = await t.admin.customers.issueToken(x.solo.contactId, 'to revoke');
      expect((await call(t.app, 'GET', '/customers', { token })).status).toBe(200);
      await t.admin.customers.revokeToken(tokenId);
      for (const authorization of [`token ${token}`, basic('token', token)]) {
        const r = await call(t.app, 'GET', '/customers', { headers: { authorization } });
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid or revoked API token.')));
      }
      // the customer's other token keeps working
      expect((await call(t.app, 'GET', '/customers', { token: x.solo.token })).status).toBe(200);
    });

    it('deleting a contact invalidates its token at once (API guide "Authentication")', async () => {
      const { contactId } = await t.admin.customers.createContact(Number(x.solo.customerId), { name: 'Second', email: 'second@solo.example' });
      const { token } = await t.admin.customers.issueToken(contactId, 'second');
      const before = await call(t.app, 'GET', '/customers', { token });
      expect(before.status).toBe(200);
      expect(before.json).toEqual({ links: { self: `${BASE}/customers` }, data: [customer('solo', x.solo, null)], meta: { total: 1 } });
      await t.admin.customers.deleteContact(contactId);
      const r = await call(t.app, 'GET', '/customers', { token });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid or revoked API token.')));
      expect((await call(t.app, 'GET', '/customers', { token: x.solo.token })).status).toBe(200);
    });
  });
});
