// Refused panel logins (API guide "Panel sessions (extension)", "Rate limits and blocking", "Audit
// events"): each counts towards the blocking of the client like any refused authentication, is
// recorded in the audit trail as a 401, and neither the trail nor the log holds the password or code.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp } from '../../helpers/app.js';
import { errorBody } from '../../helpers/errors.js';
import { auditRows } from '../../helpers/audit-events.js';
import { logIn, loginBody, panelContact } from '../../helpers/panel.js';

const PW = 'the right portal password';

describe.each(ENGINES)('refused panel logins on %s', { timeout: 60_000 }, (engine) => {
  it('ERROR_BLOCK_MAX refused logins block the client (429 too_many_errors), even for the right password then; other clients log in', async () => {
    const t = await createTestApp(engine, { ERROR_BLOCK_MAX: '3' });
    try {
      await panelContact(t.admin, 'Bo', 'bo@blocked.example', PW);
      const from = '203.0.113.7';
      for (let i = 0; i < 3; i++) {
        expect((await call(t.app, 'POST', '/session', { body: loginBody('bo@blocked.example', `guess ${i}`), remoteAddress: from })).status).toBe(401);
      }
      const blocked = await call(t.app, 'POST', '/session', { body: loginBody('bo@blocked.example', PW), remoteAddress: from });
      expect(blocked.status).toBe(429);
      expect(blocked.json).toEqual(errorBody('too_many_errors', 429, 'Too many errors', 'Too many failed requests; API access is blocked for a while.', `${BASE}/session`));
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      await logIn(t.app, 'bo@blocked.example', PW, undefined, '203.0.113.8');
    } finally {
      await t.close();
    }
  });

  it('the audit trail records each login as a POST /session with its status (a refused one without a customer), and no log line or event holds the password', async () => {
    const lines: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk) => lines.push(String(chunk)));
    const t = await createTestApp(engine, { LOG_LEVEL: 'trace' }, { logStream });
    try {
      const { customerId, contactId } = await panelContact(t.admin, 'Al', 'al@audit.example', PW);
      expect((await call(t.app, 'POST', '/session', { body: loginBody('al@audit.example', 'a wrong secret guess', '654321'), remoteAddress: '192.0.2.9' })).status).toBe(401);
      await logIn(t.app, 'al@audit.example', PW, undefined, '192.0.2.9');
      const events = (await auditRows(t)).map((e) => ({ method: e.method, path: e.path, status: e.status, customer_id: e.customer_id, contact_id: e.contact_id, token_id: e.token_id, client_ip: e.client_ip }));
      expect(events).toEqual([
        { method: 'POST', path: '/session', status: 401, customer_id: null, contact_id: null, token_id: null, client_ip: '192.0.2.9' },
        { method: 'POST', path: '/session', status: 201, customer_id: customerId, contact_id: contactId, token_id: null, client_ip: '192.0.2.9' },
      ]);
      const stored = JSON.stringify(await auditRows(t));
      const logged = lines.join('');
      expect(logged).toContain('"url":"/session"');
      for (const secret of [PW, 'a wrong secret guess', '654321']) {
        expect(stored).not.toContain(secret);
        expect(logged).not.toContain(secret);
      }
    } finally {
      await t.close();
    }
  });
});
