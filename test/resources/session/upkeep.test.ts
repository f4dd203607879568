// The upkeep of panel logins (API guide "Panel sessions (extension)"; docs/decisions/0030-panel-sessions.md):
// a worker purges sessions past their hard end every hour; `admin webhook reseal` seals the TOTP
// secrets again under the first key of WEBHOOK_SECRET_KEY, and two-factor logins go on working.
import { describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, freshStore, processUrl } from '../../helpers/app.js';
import { waitFor } from '../../helpers/wait.js';
import { runCli } from '../../helpers/cli.js';
import { codeAt, logIn, loginBody, panelContact } from '../../helpers/panel.js';
import { secretBox } from '../../../src/security/secret-box.js';

describe.each(ENGINES)('panel session upkeep on %s', { timeout: 60_000 }, (engine) => {
  it('a worker deletes the sessions past their hard end (hourly job session purge); the others stay', async () => {
    const ts = await freshStore(engine);
    const t = await createTestApp(engine, {}, { store: ts });
    try {
      await panelContact(t.admin, 'Pia', 'pia@purge.example', 'pia password here');
      const old = await logIn(t.app, 'pia@purge.example', 'pia password here');
      const kept = await logIn(t.app, 'pia@purge.example', 'pia password here');
      const [first] = await ts.store.db.selectFrom('panel_sessions').select('id').orderBy('id').execute();
      await ts.store.db.updateTable('panel_sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', first.id).execute();
      const worker = await createTestApp(engine, { JOB_POLL_MS: '50' }, { store: ts, worker: true });
      try {
        await waitFor('the purge', async () => (await ts.store.db.selectFrom('panel_sessions').select('id').execute()).length === 1);
        const job = await ts.store.db.selectFrom('queue_jobs').selectAll().where('job_type', '=', 'session').executeTakeFirstOrThrow();
        expect(job).toMatchObject({ action: 'purge', customer_id: null, object_id: null });
      } finally {
        await worker.close();
      }
      expect((await call(t.app, 'GET', '/session', { headers: old.cookieOnly })).status).toBe(401);
      expect((await call(t.app, 'GET', '/session', { headers: kept.cookieOnly })).status).toBe(200);
    } finally {
      await t.close();
      await ts.drop();
    }
  });

  it('`admin webhook reseal` seals TOTP secrets under the new first key; a server with that key alone still checks the codes', async () => {
    const ts = await freshStore(engine);
    const key = Buffer.alloc(32, 7).toString('base64');
    const t = await createTestApp(engine, {}, { store: ts });
    try {
      await panelContact(t.admin, 'Rae', 'rae@reseal.example', 'rae password here');
      const b = await logIn(t.app, 'rae@reseal.example', 'rae password here');
      const secret = (await call(t.app, 'POST', '/session/totp', { headers: b.headers })).json.data.attributes.secret as string;
      expect((await call(t.app, 'POST', '/session/totp/confirm', { headers: b.headers, body: { data: { type: 'totp-enrolment', attributes: { code: codeAt(secret, -1) } } } })).status).toBe(200);
      const r = await runCli(['admin', 'webhook', 'reseal', '--json'], { DATABASE_URL: processUrl(ts), WEBHOOK_SECRET_KEY: key, LOG_LEVEL: 'silent' });
      expect({ code: r.code, out: JSON.parse(r.stdout) }).toEqual({ code: 0, out: { resealed: 1 } });
      const { secret: sealed } = await ts.store.db.selectFrom('contact_totp').select('secret').executeTakeFirstOrThrow();
      // Opened with the new key and a store key that is not the real one: the new key alone opens it.
      expect(secretBox([key], Buffer.alloc(32).toString('base64')).open(sealed)).toBe(secret);
      const keyed = await createTestApp(engine, { WEBHOOK_SECRET_KEY: key }, { store: ts });
      try {
        expect((await call(keyed.app, 'POST', '/session', { body: loginBody('rae@reseal.example', 'rae password here', codeAt(secret)) })).status).toBe(201);
      } finally {
        await keyed.close();
      }
    } finally {
      await t.close();
      await ts.drop();
    }
  });
});
