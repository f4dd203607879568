// The local stack's mail servers (docs/decisions/0009-mail-directory.md; src/node/render,
// deploy/local/up.sh): private Dovecot and Postfix started by up.sh on a fresh store of each
// engine, reading hostplane's mail directory (migration 008, seeded with
// test/helpers/mail-directory.ts) — on PostgreSQL through the read-only role up.sh makes.
// Seen as a mail client sees it, over IMAP and SMTP: logins with the mailbox password and an
// application password; a deleted application password, a changed password and a deleted mailbox
// refused at once (nothing pushed or reloaded); delivery to a mailbox, through a forward (to a
// mailbox and a +tag address) and through a mailbox's forward_to that keeps a copy; an unknown
// recipient refused at RCPT; the doveadm HTTP API's quotaGet; down.sh stopping both by pid.
// Needs what the web stack needs plus root, dovecot, postfix, setpriv and psql; skipped without,
// failed under CI_REQUIRE_ALL=1.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, type TestStore } from '../helpers/app.js';
import { ImapClient, imapLogin, inboxCount, inboxMessages } from '../helpers/imap.js';
import {
  addAlias,
  addAppPassword,
  addDomain,
  addUser,
  removeAppPassword,
  removeUser,
  setPassword,
} from '../helpers/mail-directory.js';
import { sendMail } from '../helpers/smtp.js';
import { DOWN, describeMailStack, rspamdMissing, script, unregisterHint, upOnFreePorts } from '../helpers/stack.js';
import { freePort } from '../helpers/ports.js';
import { pollUntil } from '../helpers/wait.js';
import { alive } from '../helpers/procs.js';

const STEP_MS = 60_000;
/** up.sh starts Caddy, Dovecot, Postfix, rspamd, the policy service and sshd: minutes on a busy CI machine. */
const UP_MS = 240_000;
/**
 * Whether up.sh starts rspamd here (docs/decisions/0011-antispam-and-autoresponder.md; its own
 * suite is rspamd-stack.test.ts).
 */
const RSPAMD = rspamdMissing() === null;
const MB = 1024 * 1024;

async function pidOf(file: string): Promise<number> {
  return Number.parseInt((await fs.readFile(file, 'utf8')).trim(), 10);
}

describeMailStack('deploy/local/up.sh: Dovecot and Postfix on the mail directory', () => {
  describe.each(ENGINES)('%s', (engine) => {
    let ts: TestStore;
    let root: string;
    let dir: string;
    let base: number;
    let imap: string;
    let smtp: string;
    let appPassword: { id: number; secret: string };
    let reader: string | null = null;
    /** The API's port up.sh is given (PORT): Dovecot and rspamd are to reach the API there. */
    let apiPort: number;

    /** Sends one message from a sender outside; returns the session's reply codes. */
    const send = (to: string[], subject: string) =>
      sendMail(smtp, { from: 'sender@outside.example', to, message: `From: sender@outside.example\nSubject: ${subject}\n\n${subject} body\n` });

    /** Waits until `user`'s INBOX holds more than `before` messages; returns the newest one. */
    async function arrives(user: string, password: string, before: number): Promise<string> {
      const count = await pollUntil(() => inboxCount(imap, user, password), (n) => n > before, `a new message in ${user}'s INBOX`);
      expect(count).toBe(before + 1);
      return (await inboxMessages(imap, user, password)).at(-1)!;
    }

    beforeAll(async () => {
      // Migrated: the mail directory (migration 008) exists before up.sh, which grants the reader
      // SELECT on the tables there are.
      ts = await freshStore(engine);
      await addDomain(ts.store, 'd.example');
      await addUser(ts.store, { address: 'a@d.example', password: 'P-a-1', quotaBytes: 10 * MB });
      await addUser(ts.store, { address: 'b@d.example', password: 'P-b-1', quotaBytes: 10 * MB });
      await addUser(ts.store, { address: 'c@d.example', password: 'P-c-1', quotaBytes: 10 * MB });
      appPassword = await addAppPassword(ts.store, 'a@d.example');
      await addAlias(ts.store, 'f@d.example', ['a@d.example', 'b+tag@d.example']);
      await addAlias(ts.store, 'c@d.example', ['c@d.example', 'a@d.example']);
      // The users mail, dovecot and postfix must be able to enter the stack's dir (as in production).
      root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-mail-stack-'));
      await fs.chmod(root, 0o755);
      dir = path.join(await fs.realpath(root), 'stack');
    }, STEP_MS);

    afterAll(async () => {
      if (dir) await script(DOWN, [dir], {}).catch(() => undefined);
      if (root) await fs.rm(root, { recursive: true, force: true });
      // The role up.sh made is the cluster's: it goes with the test's schema.
      if (reader) {
        await sql`drop owned by ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
        await sql`drop role if exists ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
      }
      await ts?.drop();
    }, STEP_MS);

    it('up.sh starts Dovecot and Postfix and adds "mail" to stack.json', async () => {
      apiPort = await freePort();
      const up = await upOnFreePorts(dir, { DATABASE_URL: processUrl(ts), PORT: String(apiPort) });
      base = up.base;
      expect(up.run.stderr).toBe('');
      expect(up.run.code).toBe(0);
      imap = `127.0.0.1:${base + 11}`;
      smtp = `127.0.0.1:${base + 10}`;
      const stack = JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'));
      // SFTP runs where the stack's sshd can (decision 0023); its entry names port-base+20.
      const sftp = stack.web?.sftp === undefined ? {} : {
        sftp: { host: '127.0.0.1', port: base + 20, host_key_fingerprint: expect.stringMatching(/^SHA256:/), known_hosts: path.join(dir, 'sftp/known_hosts'), log: path.join(dir, 'sftp/sshd.log') },
      };
      expect(stack).toEqual({
        web: {
          name: 'local',
          http: `127.0.0.1:${base + 1}`,
          https: `127.0.0.1:${base + 2}`,
          caddy_admin: `http://127.0.0.1:${base}`,
          home_root: path.join(dir, 'www'),
          ...sftp,
        },
        mail: {
          smtp,
          imap,
          lmtp: `127.0.0.1:${base + 12}`,
          doveadm: `http://127.0.0.1:${base + 13}`,
          submission: `127.0.0.1:${base + 17}`,
          submissions: `127.0.0.1:${base + 18}`,
          tls_ca: path.join(dir, 'mail/tls/cert.pem'),
          policy: `127.0.0.1:${base + 19}`,
          ...(RSPAMD ? { rspamd: { milter: `127.0.0.1:${base + 14}`, controller: `http://127.0.0.1:${base + 15}` } } : {}),
        },
      });
      const dovecotPid = await pidOf(path.join(dir, 'mail/run/master.pid'));
      const postfixPid = await pidOf(path.join(dir, 'mail/spool/pid/master.pid'));
      expect(up.run.stdout).toContain(`Mail     SMTP ${smtp} (Postfix, pid ${postfixPid}, log ${dir}/mail/postfix.log), IMAP ${imap} and\n`);
      expect(up.run.stdout).toContain(`LMTP 127.0.0.1:${base + 12} (Dovecot, pid ${dovecotPid}, log ${dir}/mail/dovecot.log)`);
      if (engine === 'postgres') {
        reader = `hostplane_mail_${new URL(ts.url).pathname.slice(1)}_${ts.schema}`;
        expect(up.run.stdout).toContain(`they read the mail directory from\n           PostgreSQL as the read-only role ${reader}\n`);
      } else {
        expect(up.run.stdout).toContain(`they read the mail directory from\n           SQLite ${ts.url}\n`);
      }
      expect((await fs.stat(path.join(dir, 'mail/doveadm.key'))).mode & 0o777).toBe(0o600);
      // The API they reach is where `npm start` with the same PORT listens, and the "Use it:" lines say so.
      expect(await fs.readFile(path.join(dir, 'mail/dovecot/dovecot.conf'), 'utf8')).toContain(
        `\nauth_policy_server_url = http://127.0.0.1:${apiPort}/internal/mail-auth-report\n`,
      );
      // (with WEB_SFTP_LOG when the stack's sshd runs: the worker follows its log for the keys' last use)
      expect(up.run.stdout).toMatch(new RegExp(` DATABASE_URL=\\S+ PORT=${apiPort}( WEB_SFTP_LOG=\\S+)? npm start\n`));
      expect(up.run.stdout).toContain(
        `\n      Dovecot reports logins to it${RSPAMD ? ' and rspamd asks it for the antispam modes' : ''} at http://127.0.0.1:${apiPort}\n` +
          '      (HOSTPLANE_URL, else port PORT or 8080): npm start must listen there\n',
      );
      if (RSPAMD) {
        const rspamdPid = await pidOf(path.join(dir, 'mail/rspamd/rspamd.pid'));
        expect(up.run.stdout).toContain(
          `  rspamd   milter 127.0.0.1:${base + 14} (Postfix's), controller http://127.0.0.1:${base + 15} (pid ${rspamdPid},\n` +
            `           log ${dir}/mail/rspamd/rspamd.log); antispam modes from http://127.0.0.1:${apiPort}/internal/rspamd-settings\n`,
        );
        // Its log names the settings map's URL with the report key: only rspamd reads it.
        expect((await fs.stat(path.join(dir, 'mail/rspamd/rspamd.log'))).mode & 0o777).toBe(0o600);
      }
    }, UP_MS);

    it.runIf(engine === 'postgres')('the PostgreSQL role reads exactly the five mail tables and writes nothing', async () => {
      const grants = await sql<{ table_name: string; privilege_type: string }>`
        select table_name, privilege_type from information_schema.role_table_grants
        where grantee = ${reader} order by table_name, privilege_type`.execute(ts.store.db);
      expect(grants.rows).toEqual([
        { table_name: 'mail_aliases', privilege_type: 'SELECT' },
        { table_name: 'mail_app_passwords', privilege_type: 'SELECT' },
        { table_name: 'mail_domains', privilege_type: 'SELECT' },
        { table_name: 'mail_sieve', privilege_type: 'SELECT' },
        { table_name: 'mail_users', privilege_type: 'SELECT' },
      ]);
    });

    it('IMAP LOGIN: the mailbox password works, a wrong one is refused, an application password works', async () => {
      expect(await imapLogin(imap, 'a@d.example', 'P-a-1')).toBe('OK');
      expect(await imapLogin(imap, 'a@d.example', 'wrong')).toBe('NO');
      expect(await imapLogin(imap, 'A@D.example', 'P-a-1')).toBe('OK');
      expect(await imapLogin(imap, 'a@d.example', appPassword.secret)).toBe('OK');
      expect(await imapLogin(imap, 'b@d.example', appPassword.secret)).toBe('NO');
    });

    it('a deleted application password is refused at the next login; the others still work', async () => {
      const other = await addAppPassword(ts.store, 'a@d.example');
      expect(await imapLogin(imap, 'a@d.example', appPassword.secret)).toBe('OK');
      await removeAppPassword(ts.store, appPassword.id);
      expect(await imapLogin(imap, 'a@d.example', appPassword.secret)).toBe('NO');
      expect(await imapLogin(imap, 'a@d.example', other.secret)).toBe('OK');
      expect(await imapLogin(imap, 'a@d.example', 'P-a-1')).toBe('OK');
    });

    it('a changed password: the new one works and the old one is refused at once', async () => {
      await setPassword(ts.store, 'a@d.example', 'P-a-2');
      expect(await imapLogin(imap, 'a@d.example', 'P-a-2')).toBe('OK');
      expect(await imapLogin(imap, 'a@d.example', 'P-a-1')).toBe('NO');
    });

    it('SMTP to a mailbox: accepted at every step, in its INBOX', async () => {
      const before = await inboxCount(imap, 'a@d.example', 'P-a-2');
      expect(before).toBe(0);
      const s = await send(['a@d.example'], 'to-a');
      expect(s).toEqual({
        greeting: 220,
        ehlo: 250,
        mail: 250,
        rcpt: [{ code: 250, text: '2.1.5 Ok' }],
        data: 354,
        message: { code: 250, text: expect.stringMatching(/^2\.0\.0 Ok: queued as \w+$/) },
        quit: 221,
      });
      const msg = await arrives('a@d.example', 'P-a-2', before);
      expect(msg).toContain('Subject: to-a\r\n');
      expect(msg).toContain('\r\n\r\nto-a body\r\n');
      expect(msg).toMatch(/^Return-Path: <sender@outside\.example>\r\n/);
    }, STEP_MS);

    it('SMTP to a forward: the mailbox and the +tag target (another mailbox) each get it', async () => {
      const a0 = await inboxCount(imap, 'a@d.example', 'P-a-2');
      const b0 = await inboxCount(imap, 'b@d.example', 'P-b-1');
      const s = await send(['f@d.example'], 'to-f');
      expect(s.rcpt).toEqual([{ code: 250, text: '2.1.5 Ok' }]);
      expect(s.message?.code).toBe(250);
      expect(await arrives('a@d.example', 'P-a-2', a0)).toContain('Subject: to-f\r\n');
      expect(await arrives('b@d.example', 'P-b-1', b0)).toContain('Subject: to-f\r\n');
    }, STEP_MS);

    it('SMTP to a mailbox with forward_to that keeps a copy: it and the target get it', async () => {
      const a0 = await inboxCount(imap, 'a@d.example', 'P-a-2');
      const c0 = await inboxCount(imap, 'c@d.example', 'P-c-1');
      const s = await send(['c@d.example'], 'to-c');
      expect(s.rcpt).toEqual([{ code: 250, text: '2.1.5 Ok' }]);
      expect(await arrives('c@d.example', 'P-c-1', c0)).toContain('Subject: to-c\r\n');
      expect(await arrives('a@d.example', 'P-a-2', a0)).toContain('Subject: to-c\r\n');
    }, STEP_MS);

    it('an unknown recipient of a hosted domain is refused at RCPT with 550', async () => {
      const s = await send(['nobody@d.example'], 'to-nobody');
      expect(s).toEqual({
        greeting: 220,
        ehlo: 250,
        mail: 250,
        rcpt: [{ code: 550, text: '5.1.1 <nobody@d.example>: Recipient address rejected: User unknown in virtual mailbox table' }],
        data: null,
        message: null,
        quit: 221,
      });
    });

    it('doveadm HTTP API: quotaGet of a mailbox answers its usage and its 10 MB limit', async () => {
      const key = (await fs.readFile(path.join(dir, 'mail/doveadm.key'), 'utf8')).trim();
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      const res = await fetch(`http://127.0.0.1:${base + 13}/doveadm/v1`, {
        method: 'POST',
        headers: { authorization: `X-Dovecot-API ${Buffer.from(key).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify([['quotaGet', { user: 'a@d.example' }, 'q1']]),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as [string, Array<Record<string, string>>, string][];
      expect(body).toEqual([
        [
          'doveadmResponse',
          [
            { root: 'User quota', type: 'STORAGE', value: expect.stringMatching(/^[1-9]\d*$/), limit: '10240', percent: expect.stringMatching(/^\d+$/) },
            { root: 'User quota', type: 'MESSAGE', value: '3', limit: '-', percent: '0' },
          ],
          'q1',
        ],
      ]);
      const wrong = await fetch(`http://127.0.0.1:${base + 13}/doveadm/v1`, {
        method: 'POST',
        headers: { authorization: `X-Dovecot-API ${Buffer.from('not-the-key').toString('base64')}` },
        body: JSON.stringify([['quotaGet', { user: 'a@d.example' }, 'q1']]),
      });
      expect(wrong.status).toBe(401);
    });

    it('a deleted mailbox: its next login and RCPT to it are refused at once', async () => {
      const session = await ImapClient.connect(imap);
      expect((await session.login('b@d.example', 'P-b-1')).status).toBe('OK');
      await removeUser(ts.store, 'b@d.example');
      expect(await imapLogin(imap, 'b@d.example', 'P-b-1')).toBe('NO');
      const s = await send(['b@d.example'], 'to-deleted-b');
      expect(s.rcpt).toEqual([{ code: 550, text: '5.1.1 <b@d.example>: Recipient address rejected: User unknown in virtual mailbox table' }]);
      expect(s.data).toBeNull();
      await session.logout();
    });

    it('down.sh stops Dovecot, Postfix and rspamd by their pids; the mailboxes stay', async () => {
      const dovecotPid = await pidOf(path.join(dir, 'mail/run/master.pid'));
      const postfixPid = await pidOf(path.join(dir, 'mail/spool/pid/master.pid'));
      const caddyPid = await pidOf(path.join(dir, 'caddy/caddy.pid'));
      const rspamdPid = RSPAMD ? await pidOf(path.join(dir, 'mail/rspamd/rspamd.pid')) : 0;
      const policyPid = await pidOf(path.join(dir, 'mail/policy/policy.pid'));
      const sshdPid = existsSync(path.join(dir, 'sftp/sshd.pid')) ? await pidOf(path.join(dir, 'sftp/sshd.pid')) : 0;
      if (RSPAMD) expect(await alive(rspamdPid)).toBe(true);
      expect(await alive(policyPid)).toBe(true);
      expect(await alive(dovecotPid)).toBe(true);
      expect(await alive(postfixPid)).toBe(true);
      const down = await script(DOWN, [dir], {});
      expect(down.stderr).toBe('');
      expect(down.code).toBe(0);
      expect(down.stdout).toBe(
        `down.sh: stopped caddy (pid ${caddyPid}).\n` +
          (sshdPid ? `down.sh: stopped sshd (pid ${sshdPid}).\n` : '') +
          `down.sh: stopped postfix (pid ${postfixPid}).\n` +
          `down.sh: stopped the mail policy service (pid ${policyPid}).\n` +
          (RSPAMD ? `down.sh: stopped rspamd (pid ${rspamdPid}).\n` : '') +
          `down.sh: stopped dovecot (pid ${dovecotPid}).\n` +
          unregisterHint(processUrl(ts), 'local', 'local'),
      );
      if (RSPAMD) {
        expect(await alive(rspamdPid)).toBe(false);
        expect(existsSync(path.join(dir, 'mail/rspamd/rspamd.pid'))).toBe(false);
      }
      expect(await alive(dovecotPid)).toBe(false);
      expect(await alive(postfixPid)).toBe(false);
      expect(await alive(policyPid)).toBe(false);
      expect(existsSync(path.join(dir, 'mail/policy/policy.pid'))).toBe(false);
      expect(existsSync(path.join(dir, 'mail/run/master.pid'))).toBe(false);
      expect(existsSync(path.join(dir, 'mail/spool/pid/master.pid'))).toBe(false);
      await expect(imapLogin(imap, 'a@d.example', 'P-a-2')).rejects.toThrow(/ECONNREFUSED/);
      await expect(send(['a@d.example'], 'after-down')).rejects.toThrow(/ECONNREFUSED/);
      const maildir = path.join(dir, 'mail/vmail/d.example/a/Maildir');
      expect((await fs.readdir(path.join(maildir, 'new'))).length + (await fs.readdir(path.join(maildir, 'cur'))).length).toBe(3);
      expect(await script(DOWN, [dir], {})).toEqual({ code: 0, stdout: `down.sh: nothing was running in ${dir}.\n`, stderr: '' });
    }, STEP_MS);
  });
});
