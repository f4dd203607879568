// The mail driver (src/provisioning/mail/driver.ts; docs/decisions/0009-mail-directory.md) against
// the local stack's real Dovecot and Postfix (deploy/local/up.sh) on a fresh store of each engine,
// its mail directory seeded as hostplane's commits write it (test/helpers/mail-directory.ts). Every
// method, yes and no: a login's lookup (authenticates), RCPT TO (acceptsRecipient, with IDN domains
// and a non-ASCII local part), isGone, removeMail of a mailbox with mail (its mail home gone
// afterwards, a second run, a mailbox that never got mail, an open IMAP session ended), quotaUsed
// after a delivery, and a wrong key or an unreachable doveadm as errors that never contain the key.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, type TestStore } from '../../helpers/app.js';
import { ImapClient, inboxCount } from '../../helpers/imap.js';
import { addDomain, addUser, deactivateUser, removeUser } from '../../helpers/mail-directory.js';
import { freePort } from '../../helpers/ports.js';
import { sendMail } from '../../helpers/smtp.js';
import { DOWN, describeMailStack, script, upOnFreePorts, STACK_UP_MS } from '../../helpers/stack.js';
import { pollUntil } from '../../helpers/wait.js';
import { dovecotMailDriver, type MailServerConn } from '../../../src/provisioning/mail/driver.js';
import { DoveadmError } from '../../../src/provisioning/mail/doveadm.js';

const STEP_MS = 60_000;
const MB = 1024 * 1024;

const exists = (p: string) => fs.access(p).then(() => true, () => false);

describeMailStack('the Dovecot mail driver on the local stack', () => {
  describe.each(ENGINES)('%s', (engine) => {
    const mail = dovecotMailDriver({ timeoutMs: 10_000 });
    let ts: TestStore;
    let root: string;
    let dir: string;
    let conn: MailServerConn;
    let imap: string;
    let reader: string | null = null;
    /** Where the stack keeps a mailbox's home: <dir>/mail/vmail/<domain>/<local part>. */
    const homeOf = (address: string) => path.join(dir, 'mail/vmail', address.split('@')[1], address.split('@')[0]);

    const deliver = async (to: string, subject: string) => {
      const s = await sendMail(conn.smtp, { from: 'sender@outside.example', to: [to], message: `From: sender@outside.example\nSubject: ${subject}\n\n${'x'.repeat(3000)}\n` });
      expect(s.message?.code, `delivery to ${to}`).toBe(250);
    };

    beforeAll(async () => {
      ts = await freshStore(engine);
      await addDomain(ts.store, 'd.example');
      await addDomain(ts.store, 'xn--bcher-kva.example');
      for (const local of ['live', 'quiet', 'full', 'gone', 'never', 'session']) {
        await addUser(ts.store, { address: `${local}@d.example`, password: `P-${local}-1`, quotaBytes: 10 * MB });
      }
      await addUser(ts.store, { address: 'idn@xn--bcher-kva.example', password: 'P-idn-1', quotaBytes: 10 * MB });
      root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-mail-driver-'));
      await fs.chmod(root, 0o755);
      dir = path.join(await fs.realpath(root), 'stack');
      const up = await upOnFreePorts(dir, { DATABASE_URL: processUrl(ts) });
      expect(up.run.stderr).toBe('');
      expect(up.run.code).toBe(0);
      if (engine === 'postgres') reader = `hostplane_mail_${new URL(ts.url).pathname.slice(1)}_${ts.schema}`;
      const stack = JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'));
      conn = {
        name: 'mx-test',
        doveadmUrl: stack.mail.doveadm,
        doveadmKey: (await fs.readFile(path.join(dir, 'mail/doveadm.key'), 'utf8')).trim(),
        smtp: stack.mail.smtp,
      };
      imap = stack.mail.imap;
    }, STACK_UP_MS);

    afterAll(async () => {
      await mail.close();
      if (dir) await script(DOWN, [dir], {}).catch(() => undefined);
      if (root) await fs.rm(root, { recursive: true, force: true });
      if (reader) {
        await sql`drop owned by ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
        await sql`drop role if exists ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
      }
      await ts?.drop();
    }, STEP_MS);

    it('authenticates: an active mailbox yes (in any case); an unknown or inactive one no', async () => {
      expect(await mail.authenticates(conn, 'live@d.example')).toBe(true);
      expect(await mail.authenticates(conn, 'LIVE@D.example')).toBe(true);
      expect(await mail.authenticates(conn, 'idn@xn--bcher-kva.example')).toBe(true);
      expect(await mail.authenticates(conn, 'nobody@d.example')).toBe(false);
      expect(await mail.authenticates(conn, 'live@elsewhere.example')).toBe(false);
      await addUser(ts.store, { address: 'inactive@d.example', password: 'P-i-1', quotaBytes: MB });
      await deactivateUser(ts.store, 'inactive@d.example');
      expect(await mail.authenticates(conn, 'inactive@d.example')).toBe(false);
    });

    it('acceptsRecipient: RCPT TO an active mailbox yes (an IDN domain in Unicode too); unknown, inactive and non-ASCII no', async () => {
      expect(await mail.acceptsRecipient(conn, 'live@d.example')).toBe(true);
      expect(await mail.acceptsRecipient(conn, 'live+tag@d.example')).toBe(true);
      expect(await mail.acceptsRecipient(conn, 'idn@bücher.example')).toBe(true);
      expect(await mail.acceptsRecipient(conn, 'idn@xn--bcher-kva.example')).toBe(true);
      expect(await mail.acceptsRecipient(conn, 'nobody@d.example')).toBe(false);
      expect(await mail.acceptsRecipient(conn, 'inactive@d.example')).toBe(false);
      // This Postfix does not advertise SMTPUTF8 (smtputf8_enable = no): it cannot take such mail.
      expect(await mail.acceptsRecipient(conn, 'jörg@d.example')).toBe(false);
      await expect(mail.acceptsRecipient(conn, 'live@d.example>\r\nRSET')).rejects.toThrow(/is not an e-mail address/);
    });

    it('isGone: an active mailbox is not; an inactive row and a removed row are', async () => {
      expect(await mail.isGone(conn, 'live@d.example')).toBe(false);
      expect(await mail.isGone(conn, 'inactive@d.example')).toBe(true);
      expect(await mail.isGone(conn, 'nobody@d.example')).toBe(true);
    });

    it('quotaUsed: bytes per address after a delivery (KiB × 1024), 0 without mail; unknown addresses are left out', async () => {
      const before = await mail.quotaUsed(conn, ['live@d.example', 'quiet@d.example', 'nobody@d.example']);
      expect(before).toEqual(new Map([['live@d.example', 0], ['quiet@d.example', 0]]));
      await deliver('live@d.example', 'quota');
      await pollUntil(() => inboxCount(imap, 'live@d.example', 'P-live-1'), (n) => n === 1, 'the message in live@d.example');
      const after = await mail.quotaUsed(conn, ['live@d.example', 'quiet@d.example', 'nobody@d.example', 'wild*@d.example']);
      expect([...after.keys()].sort()).toEqual(['live@d.example', 'quiet@d.example']);
      expect(after.get('quiet@d.example')).toBe(0);
      const used = after.get('live@d.example')!;
      expect(used % 1024).toBe(0);
      expect(used).toBeGreaterThanOrEqual(3000);
      expect(used).toBeLessThanOrEqual(8 * 1024);
      expect(await mail.quotaUsed(conn, [])).toEqual(new Map());
    }, STEP_MS);

    it('quotaUsed asks in batches', async () => {
      const small = dovecotMailDriver({ quotaBatch: 2 });
      const used = await small.quotaUsed(conn, ['live@d.example', 'quiet@d.example', 'full@d.example', 'nobody@d.example', 'idn@xn--bcher-kva.example']);
      expect([...used.keys()].sort()).toEqual(['full@d.example', 'idn@xn--bcher-kva.example', 'live@d.example', 'quiet@d.example']);
    });

    it('removeMail: every message and folder of an inactive mailbox goes, its home too; a second run converges', async () => {
      await deliver('full@d.example', 'one');
      await deliver('full@d.example', 'two');
      await pollUntil(() => inboxCount(imap, 'full@d.example', 'P-full-1'), (n) => n === 2, 'two messages in full@d.example');
      const session = await ImapClient.connect(imap);
      expect((await session.login('full@d.example', 'P-full-1')).status).toBe('OK');
      expect((await session.command('CREATE Archive')).status).toBe('OK');
      expect((await session.open('INBOX', 'SELECT')).exists).toBe(2);
      expect((await session.command('COPY 1 Archive')).status).toBe('OK');
      await session.logout();
      const home = homeOf('full@d.example');
      const archived = [...(await fs.readdir(path.join(home, 'Maildir/.Archive/cur'))), ...(await fs.readdir(path.join(home, 'Maildir/.Archive/new')))];
      expect(archived.length).toBe(1);
      expect((await mail.quotaUsed(conn, ['full@d.example'])).get('full@d.example')).toBeGreaterThan(0);

      // As the API deletes: the row inactive (logins and SMTP stop), then the job removes the mail.
      await deactivateUser(ts.store, 'full@d.example');
      await mail.removeMail(conn, 'full@d.example');
      expect(await exists(home)).toBe(false);
      expect(await exists(path.join(dir, 'mail/vmail/d.example'))).toBe(true);
      await mail.removeMail(conn, 'full@d.example');
      expect(await exists(home)).toBe(false);
      expect(await mail.isGone(conn, 'full@d.example')).toBe(true);
      // The other mailboxes keep theirs.
      expect(await inboxCount(imap, 'live@d.example', 'P-live-1')).toBe(1);
    }, STEP_MS);

    it('removeMail of a mailbox that never got mail (no home yet) succeeds', async () => {
      const home = homeOf('never@d.example');
      expect(await exists(home)).toBe(false);
      await deactivateUser(ts.store, 'never@d.example');
      await mail.removeMail(conn, 'never@d.example');
      expect(await exists(home)).toBe(false);
    });

    it('removeMail ends an open IMAP session of the address before deleting', async () => {
      await deliver('session@d.example', 'open');
      await pollUntil(() => inboxCount(imap, 'session@d.example', 'P-session-1'), (n) => n === 1, 'the message in session@d.example');
      const session = await ImapClient.connect(imap);
      expect((await session.login('session@d.example', 'P-session-1')).status).toBe('OK');
      expect((await session.open('INBOX')).exists).toBe(1);
      await deactivateUser(ts.store, 'session@d.example');
      await mail.removeMail(conn, 'session@d.example');
      await expect(session.command('NOOP')).rejects.toThrow(/closed|ECONNRESET|EPIPE/);
      await session.logout().catch(() => undefined);
      expect(await exists(homeOf('session@d.example'))).toBe(false);
    }, STEP_MS);

    it('removeMail of an address the userdb does not know is an error (the row must stay until its mail is gone)', async () => {
      await deliver('gone@d.example', 'orphan');
      await pollUntil(() => exists(path.join(homeOf('gone@d.example'), 'Maildir')), Boolean, 'the mail home of gone@d.example');
      await removeUser(ts.store, 'gone@d.example');
      await expect(mail.removeMail(conn, 'gone@d.example')).rejects.toThrow(
        'The userdb of mx-test does not know gone@d.example: its mail home cannot be found (the mail directory row must stay, inactive, until its mail is removed).',
      );
      expect(await exists(homeOf('gone@d.example'))).toBe(true);
    }, STEP_MS);

    it('addresses with * or ? are refused (doveadm takes them as wildcards)', async () => {
      for (const call of [
        () => mail.authenticates(conn, 'l*@d.example'),
        () => mail.isGone(conn, 'l?ve@d.example'),
        () => mail.removeMail(conn, '*@d.example'),
      ]) {
        await expect(call()).rejects.toThrow(/it takes \* and \? in a user name as wildcards/);
      }
    });

    it('a wrong key is an error that names the server but contains neither the key nor its base64', async () => {
      const wrongKey = `wrong-${conn.doveadmKey}`;
      const wrong = { ...conn, doveadmKey: wrongKey };
      const origin = new URL(conn.doveadmUrl).origin;
      for (const call of [
        () => mail.authenticates(wrong, 'live@d.example'),
        () => mail.isGone(wrong, 'live@d.example'),
        () => mail.removeMail(wrong, 'live@d.example'),
        () => mail.quotaUsed(wrong, ['live@d.example']),
      ]) {
        const err = await call().then(() => null, (e: unknown) => e as Error);
        expect(err).toBeInstanceOf(DoveadmError);
        expect(err!.message).toBe(`doveadm at ${origin} refused the API key (HTTP 401).`);
        for (const secret of [wrongKey, conn.doveadmKey, Buffer.from(wrongKey).toString('base64')]) {
          expect(err!.message).not.toContain(secret);
          expect(String(err!.stack)).not.toContain(secret);
        }
      }
      expect(await exists(homeOf('live@d.example'))).toBe(true);
    });

    it('an unreachable doveadm or SMTP service is an error, not an answer', async () => {
      const closed = await freePort();
      const down = { ...conn, doveadmUrl: `http://127.0.0.1:${closed}`, smtp: `127.0.0.1:${closed}` };
      const err = await mail.authenticates(down, 'live@d.example').then(() => null, (e: unknown) => e as Error);
      expect(err?.message).toBe(`doveadm at http://127.0.0.1:${closed} did not answer: connect ECONNREFUSED 127.0.0.1:${closed}`);
      expect(err?.message).not.toContain(conn.doveadmKey);
      await expect(mail.acceptsRecipient(down, 'live@d.example')).rejects.toThrow(
        `could not connect to the SMTP server at 127.0.0.1:${closed}: connect ECONNREFUSED 127.0.0.1:${closed}`,
      );
    });
  });
});
