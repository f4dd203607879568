// /email-addresses seen through the mail protocols (docs/decisions/0009-mail-directory.md): through
// HTTP on both engines, then IMAP and SMTP against the local stack's real Dovecot and Postfix,
// which read the mail directory hostplane writes (src/node/render, deploy/local/up.sh). Logins with the
// generated, a PATCHed and an application password; delivery to a mailbox, through a forward (to a
// mailbox and a +tag target) and a mailbox's forward_to that keeps a copy; forward-to changes at
// once; DELETE: logins fail, SMTP refuses, the stored mail is gone; quota usage; no plaintext
// password in the app's log lines or the mail servers' logs.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { imapLogin, inboxCount, inboxMessages } from '../../helpers/imap.js';
import { sendMail } from '../../helpers/smtp.js';
import { describeMailStack } from '../../helpers/stack.js';
import { jobDone } from '../../helpers/jobs.js';
import { pollUntil } from '../../helpers/wait.js';
import { runCli } from '../../helpers/cli.js';
import { MailServersRepository, mailServerConn } from '../../../src/provisioning/mail/servers.repository.js';
import { GOOD_PASSWORD, patchEmail, postAppPassword, postEmail, useMailSuite } from '../../helpers/email.js';

describeMailStack('e-mail addresses on Dovecot and Postfix', () => {
  describe.each(ENGINES)('on %s', { timeout: 90_000 }, (engine) => {
    const s = useMailSuite(engine);
    const token = () => s.x.end1.token;
    const domain = () => s.x.end1.domain;
    const secrets: string[] = [GOOD_PASSWORD];
    let n = 0;

    /** A live address (its job done): the 202's data and the generated password. */
    const created = async (attributes: Record<string, unknown>) => {
      const r = await postEmail(s.t, token(), { address: `m${++n}@${domain()}`, ...attributes });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token(), r);
      const password = r.json.data.attributes.password as string | undefined;
      if (password) secrets.push(password);
      return { id: r.json.data.id as string, address: r.json.data.attributes.address_ace as string, password: password ?? '' };
    };
    const send = (to: string[], subject: string) =>
      sendMail(s.smtp, { from: 'sender@outside.example', to, message: `From: sender@outside.example\nSubject: ${subject}\n\n${subject} body\n` });
    const count = (user: string, password: string) => inboxCount(s.imap, user, password);
    /** Waits until the INBOX holds `expected` messages; the newest one's text. */
    const arrived = async (user: string, password: string, expected: number) => {
      await pollUntil(() => count(user, password), (c) => c >= expected, `${expected} message(s) in ${user}'s INBOX`);
      expect(await count(user, password)).toBe(expected);
      return (await inboxMessages(s.imap, user, password)).at(-1)!;
    };

    it('the generated password logs in over IMAP once the job is done; a wrong one does not; any letter case of the address', async () => {
      const m = await created({ address_type: 'mailbox' });
      expect(await imapLogin(s.imap, m.address, m.password)).toBe('OK');
      expect(await imapLogin(s.imap, m.address.toUpperCase(), m.password)).toBe('OK');
      expect(await imapLogin(s.imap, m.address, `${m.password}x`)).toBe('NO');
      const job = await call(s.t.app, 'GET', `/email-addresses/${m.id}`, { token: token() });
      expect(job.status).toBe(200);
    });

    it('what autoconfig.<domain> names (API guide "Mail client set-up") logs in and takes mail: the stack\'s own IMAP and SMTP ports, plain', async () => {
      const m = await created({ address_type: 'mailbox' });
      const r = await call(s.t.app, 'GET', `/mail/config-v1.1.xml?emailaddress=${encodeURIComponent(m.address)}`, { headers: { host: `autoconfig.${domain()}` } });
      expect(r.status).toBe(200);
      const servers = [...r.body.matchAll(/<(incoming|outgoing)Server type="(imap|smtp)">\s*<hostname>([^<]+)<\/hostname>\s*<port>(\d+)<\/port>\s*<socketType>([^<]+)<\/socketType>/g)]
        .map(([, , type, host, port, socket]) => ({ type, at: `${host}:${port}`, socket }));
      expect(servers).toEqual([{ type: 'imap', at: s.imap, socket: 'plain' }, { type: 'smtp', at: s.smtp, socket: 'plain' }]);
      expect(await imapLogin(servers[0].at, m.address, m.password)).toBe('OK');
      const sent = await sendMail(servers[1].at, { from: 'sender@outside.example', to: [m.address], message: 'From: sender@outside.example\nSubject: set up\n\nset up body\n' });
      expect(sent.rcpt.map((c) => c.code)).toEqual([250]);
      expect(sent.message?.code).toBe(250);
    });

    it('a password set by PATCH works at once and the old one fails; so does POST …/password', async () => {
      const m = await created({ address_type: 'mailbox' });
      const p = await patchEmail(s.t, token(), m.id, { password: GOOD_PASSWORD });
      expect(p.status).toBe(200);
      expect(await imapLogin(s.imap, m.address, GOOD_PASSWORD)).toBe('OK');
      expect(await imapLogin(s.imap, m.address, m.password)).toBe('NO');
      const r = await call(s.t.app, 'POST', `/email-addresses/${m.id}/password`, { token: token() });
      const fresh = r.json.data.attributes.password;
      secrets.push(fresh);
      expect(await imapLogin(s.imap, m.address, fresh)).toBe('OK');
      expect(await imapLogin(s.imap, m.address, GOOD_PASSWORD)).toBe('NO');
    });

    it('an application password logs in as the mailbox, and fails at once after its DELETE', async () => {
      const m = await created({ address_type: 'mailbox' });
      const a = await postAppPassword(s.t, token(), m.id, { device: 'Phone', application: 'K-9 Mail' });
      expect(a.status).toBe(201);
      const secret = a.json.data.attributes.password;
      secrets.push(secret);
      expect(await imapLogin(s.imap, m.address, secret)).toBe('OK');
      // Dovecot reported the login: the list shows when it was used.
      const used = await pollUntil(
        () => call(s.t.app, 'GET', `/email-addresses/${m.id}/application-passwords`, { token: token() }).then((r) => r.json.data[0].attributes.last_used_at),
        (v) => v !== null,
        'last_used_at after an IMAP login',
      );
      expect(Date.parse(used)).toBeGreaterThanOrEqual(Date.parse(a.json.data.attributes.created_at));
      // The mailbox password still works beside it.
      expect(await imapLogin(s.imap, m.address, m.password)).toBe('OK');
      const d = await call(s.t.app, 'DELETE', `/email-addresses/${m.id}/application-passwords/${a.json.data.id}`, { token: token() });
      expect(d.status).toBe(204);
      expect(await imapLogin(s.imap, m.address, secret)).toBe('NO');
    });

    it('mail sent by SMTP to a mailbox arrives in its INBOX (any letter case, +tag)', async () => {
      const m = await created({ address_type: 'mailbox' });
      const sent = await send([m.address], 'first');
      expect(sent.rcpt.map((r) => r.code)).toEqual([250]);
      expect(await arrived(m.address, m.password, 1)).toContain('Subject: first');
      const [local, d] = m.address.split('@');
      await send([`${local.toUpperCase()}+news@${d}`], 'second');
      expect(await arrived(m.address, m.password, 2)).toContain('Subject: second');
    });

    it('a forward delivers to every target (a mailbox and a +tag target); forward-to add/remove changes delivery at once', async () => {
      const a = await created({ address_type: 'mailbox' });
      const b = await created({ address_type: 'mailbox' });
      const [bl, bd] = b.address.split('@');
      const f = await created({ address_type: 'forward', forward_to: [a.address, `${bl}+fwd@${bd}`] });
      await send([f.address], 'to the forward');
      expect(await arrived(a.address, a.password, 1)).toContain('Subject: to the forward');
      expect(await arrived(b.address, b.password, 1)).toContain('Subject: to the forward');
      // Remove a: only b gets the next one; add a back: both again.
      expect((await call(s.t.app, 'DELETE', `/email-addresses/${f.id}/forward-to/${a.address}`, { token: token() })).status).toBe(204);
      await send([f.address], 'only b');
      expect(await arrived(b.address, b.password, 2)).toContain('Subject: only b');
      expect(await count(a.address, a.password)).toBe(1);
      expect((await call(s.t.app, 'POST', `/email-addresses/${f.id}/forward-to/${a.address}`, { token: token() })).status).toBe(204);
      await send([f.address], 'both again');
      expect(await arrived(a.address, a.password, 2)).toContain('Subject: both again');
      expect(await arrived(b.address, b.password, 3)).toContain('Subject: both again');
    });

    it('a mailbox with forward_to keeps a copy and forwards', async () => {
      const target = await created({ address_type: 'mailbox' });
      const m = await created({ address_type: 'mailbox', forward_to: [target.address] });
      await send([m.address], 'copy and forward');
      expect(await arrived(m.address, m.password, 1)).toContain('Subject: copy and forward');
      expect(await arrived(target.address, target.password, 1)).toContain('Subject: copy and forward');
    });

    it('quota: limit_bytes from the plan, used_bytes from doveadm after `admin email refresh-usage`', async () => {
      const m = await created({ address_type: 'mailbox' });
      await send([m.address], 'weighs something');
      await arrived(m.address, m.password, 1);
      const r = await runCli(['admin', 'email', 'refresh-usage', '--json'], { DATABASE_URL: s.databaseUrl, LOG_LEVEL: 'silent' });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ measured: [{ server: 'local', mailboxes: expect.any(Number) }], failed: [] });
      const g = await call(s.t.app, 'GET', `/email-addresses/${m.id}`, { token: token() });
      expect(g.json.data.attributes.quota).toEqual({ limit_bytes: 2048 * 1024 * 1024, used_bytes: expect.any(Number), updated_at: expect.any(String) });
      expect(g.json.data.attributes.quota.used_bytes).toBeGreaterThan(0);
    });

    it('after DELETE (job done) the login fails, SMTP refuses the address and the stored mail is gone', async () => {
      const m = await created({ address_type: 'mailbox' });
      await send([m.address], 'to be deleted');
      await arrived(m.address, m.password, 1);
      const [local, d] = m.address.split('@');
      const home = path.join(s.dir, 'mail/vmail', d, local);
      expect(existsSync(home)).toBe(true);
      const del = await call(s.t.app, 'DELETE', `/email-addresses/${m.id}`, { token: token() });
      expect(del.status).toBe(202);
      // Refused at once (the entry is inactive at commit), before the job ran.
      expect(await imapLogin(s.imap, m.address, m.password)).toBe('NO');
      await jobDone(s.t, token(), del);
      expect(await imapLogin(s.imap, m.address, m.password)).toBe('NO');
      const refused = await send([m.address], 'after delete');
      expect(refused.rcpt[0].code).toBeGreaterThanOrEqual(500);
      const left = existsSync(home) ? await fs.readdir(home, { recursive: true }) : [];
      expect(left.filter((f) => /\/(cur|new)\/./.test(`/${f}`))).toEqual([]);
      expect((await call(s.t.app, 'GET', `/email-addresses/${m.id}`, { token: token() })).status).toBe(404);
      // The address can be created again, empty.
      const again = await postEmail(s.t, token(), { address: m.address, address_type: 'mailbox' });
      expect(again.status).toBe(202);
      await jobDone(s.t, token(), again);
      secrets.push(again.json.data.attributes.password);
      expect(await count(m.address, again.json.data.attributes.password)).toBe(0);
    });

    it('a forward is refused by SMTP after its DELETE', async () => {
      const f = await created({ address_type: 'forward', forward_to: ['someone@other.example'] });
      const del = await call(s.t.app, 'DELETE', `/email-addresses/${f.id}`, { token: token() });
      await jobDone(s.t, token(), del);
      expect((await send([f.address], 'x')).rcpt[0].code).toBeGreaterThanOrEqual(500);
    });

    it('a mail server serves only the addresses of its packages: one placed on another server does not log in here', async () => {
      await new MailServersRepository(s.t.store.db).add({
        name: 'mx-elsewhere', doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'k', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 0, created_at: new Date().toISOString(),
      });
      const { packageId } = await s.t.admin.packages.createPackage({ customerId: Number(s.x.end1.customerId), planId: Number(s.x.end1.planId), name: 'elsewhere', mailServer: 'mx-elsewhere' });
      const { domain } = await s.t.admin.domains.createDomain({ name: 'elsewhere-end1.example', customerId: Number(s.x.end1.customerId), packageId });
      const r = await postEmail(s.t, token(), { address: `info@${domain}`, address_type: 'mailbox' });
      expect(r.status).toBe(202);
      secrets.push(r.json.data.attributes.password);
      expect(await imapLogin(s.imap, `info@${domain}`, r.json.data.attributes.password)).toBe('NO');
      const local = (await new MailServersRepository(s.t.store.db).byName('local'))!;
      expect(await s.t.drivers.mail.authenticates(mailServerConn(local), `info@${domain}`)).toBe(false);
    });

    it('no plaintext password in the app log (debug level), the mail servers\' logs, any table or any job payload', async () => {
      const logs = [s.logs.join('\n'), await fs.readFile(path.join(s.dir, 'mail/dovecot.log'), 'utf8'), await fs.readFile(path.join(s.dir, 'mail/postfix.log'), 'utf8')];
      const tables = ['email_addresses', 'mail_users', 'mail_app_passwords', 'mail_aliases', 'mail_domains', 'contacts', 'queue_jobs'];
      const rows = await Promise.all(tables.map((table) => sql.raw(`select * from ${table}`).execute(s.t.store.db).then((r) => JSON.stringify(r.rows))));
      const jobs = rows.join('\n');
      expect(s.logs.length).toBeGreaterThan(0);
      for (const secret of secrets) {
        for (const text of [...logs, jobs]) expect(text.includes(secret), secret).toBe(false);
      }
    });
  });
});
