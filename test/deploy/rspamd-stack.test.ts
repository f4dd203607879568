// The antispam modes on the local stack's real rspamd and Dovecot (API guide "E-mail addresses";
// docs/decisions/0011-antispam-and-autoresponder.md, 0019-maps-a-mail-server-has-applied.md;
// src/node/render/rspamd.ts, deploy/local/up.sh): Postfix asks rspamd as a milter, rspamd reads the
// per-recipient settings from the app's settings map (GET /internal/rspamd-settings) and refuses
// spam for `reject` or marks it (X-Spam: Yes) for mailboxes; each mailbox's Sieve script applies its
// own mode. Spam is a message with the stack's test header (X-Hostplane-Test-Spam: yes,
// src/node/render/rspamd.ts) or GTUBE; sent by SMTP, read back by IMAP from INBOX and Junk.
// `reject` refuses it in the SMTP dialogue, `junk-folder` files it into Junk, `subject-rewrite`
// delivers it with "***SPAM*** " before the subject, `none` unchanged; GTUBE is refused in every
// mode. Also: +tag and letter case, forwards, one verdict per message with each mailbox's own mode
// after it; done means live: spam sent right after a new address's job is done, or right after the
// answer to a PATCH of its mode, meets that mode (how long they took: printed, not asserted); and
// mail while rspamd is down.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl } from '../helpers/app.js';
import { inboxMessages } from '../helpers/imap.js';
import { jobDone } from '../helpers/jobs.js';
import { sendMail, type SmtpSession } from '../helpers/smtp.js';
import { DOWN, describeRspamdStack, script, upOnFreePorts } from '../helpers/stack.js';
import { pollUntil } from '../helpers/wait.js';
import { patchEmail, postEmail, useMailSuite } from '../helpers/email.js';
import { MailServersRepository } from '../../src/provisioning/mail/servers.repository.js';

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
const SENDER = 'sender@outside.example';

/** A message whose subject is `subject` (unique per test, so it is found again); spam with the test header. */
const message = (subject: string, o: { spam?: boolean; gtube?: boolean; headers?: string } = {}) =>
  `From: ${SENDER}\nTo: someone@hostplane.test\nSubject: ${subject}\nMessage-ID: <${subject}@outside.example>\n` +
  `${o.spam ? 'X-Hostplane-Test-Spam: yes\n' : ''}${o.headers ?? ''}\n${subject} body\n${o.gtube ? `${GTUBE}\n` : ''}`;

/** The header block of a message as IMAP returns it. */
const headerOf = (text: string) => text.slice(0, text.search(/\r?\n\r?\n/));
/** Its X-Spam header lines (one at most, whatever the sender wrote). */
const spamHeaders = (header: string) => header.match(/^X-Spam:.*?(?=\r?$)/gim) ?? [];

describeRspamdStack('antispam modes on rspamd (the stack\'s Postfix milter)', () => {
  describe.each(ENGINES)('on %s', { timeout: 120_000 }, (engine) => {
    const s = useMailSuite(engine);
    const token = () => s.x.end1.token;
    const domain = () => s.x.end1.domain;
    const boxes: Record<string, { id: string; address: string; password: string }> = {};

    const send = (to: string[], text: string): Promise<SmtpSession> => sendMail(s.smtp, { from: SENDER, to, message: text });
    /** Whether the message was accepted after DATA (250) or refused there (5xx), and rspamd's reply. */
    const verdict = (r: SmtpSession) => ({ rcpt: r.rcpt.map((x) => x.code), data: r.data, code: r.message?.code, text: r.message?.text });
    /** Waits for the message with `subject` in the INBOX or Junk of `box`; returns its text. */
    const received = async (box: { address: string; password: string }, subject: string) => (await arrived(box, subject)).text;
    /** Waits for the message with `subject` in the INBOX or Junk of `box`: which folder, and its text. */
    const arrived = async (box: { address: string; password: string }, subject: string) => {
      const find = async () => {
        for (const folder of ['INBOX', 'Junk'] as const) {
          const text = (await inboxMessages(s.imap, box.address, box.password, folder)).find((m) => m.includes(`${subject} body`));
          if (text) return { folder, text };
        }
        return null;
      };
      return (await pollUntil(find, (m) => m !== null, `"${subject}" for ${box.address}`))!;
    };
    /** Sends spam to `to` once: rspamd's verdict as the SMTP client sees it. */
    const spamVerdict = async (to: string, tag: string) => verdict(await send([to], message(tag, { spam: true })));
    /** POST, then the job done: ms it took. */
    const create = async (key: string, attributes: Record<string, unknown>) => {
      const started = Date.now();
      const r = await postEmail(s.t, token(), { address: `${key}@${domain()}`, ...attributes });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token(), r);
      boxes[key] = { id: r.json.data.id, address: r.json.data.attributes.address_ace, password: r.json.data.attributes.password ?? '' };
      return Date.now() - started;
    };
    /** PATCH of antispam answered 200: ms it took. */
    const patchMode = async (key: string, antispam: string) => {
      const started = Date.now();
      const r = await patchEmail(s.t, token(), boxes[key].id, { antispam });
      expect(r.status, r.body).toBe(200);
      return Date.now() - started;
    };

    it('up.sh started rspamd as Postfix\'s milter and named it in stack.json; the addresses of every mode exist and rspamd has their settings', async () => {
      expect(s.rspamd).toEqual({ milter: expect.stringMatching(/^127\.0\.0\.1:\d+$/), controller: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      expect(await fetch(`${s.rspamd!.controller}/ping`).then((r) => r.text())).toMatch(/^pong/);
      const mainCf = await fs.readFile(path.join(s.dir, 'mail/postfix/main.cf'), 'utf8');
      expect(mainCf).toContain(`\nsmtpd_milters = inet:${s.rspamd!.milter}\n`);
      expect(mainCf).toContain('\nmilter_default_action = accept\n');
      // rspamd asked for its map once (at its start): from now on jobs wait for it (decision 0019).
      const server = (await new MailServersRepository(s.t.store.db).defaultServer())!.name;
      const fetched = () => s.t.store.db.selectFrom('mail_map_versions').select('fetched_at').where('server', '=', server).where('map', '=', 'settings').executeTakeFirst();
      await pollUntil(fetched, (r) => r?.fetched_at != null, 'rspamd\'s first request for its settings map', 60_000);
      await create('rej', { address_type: 'mailbox' });
      const ms = await Promise.all([
        create('junk', { address_type: 'mailbox', antispam: 'junk-folder' }),
        create('rw', { address_type: 'mailbox', antispam: 'subject-rewrite' }),
        create('none', { address_type: 'mailbox', antispam: 'none' }),
      ]);
      ms.push(
        ...(await Promise.all([
          create('fwd-none', { address_type: 'forward', forward_to: [boxes.rej.address], antispam: 'none' }),
          create('fwd-rej', { address_type: 'forward', forward_to: [boxes.none.address] }),
          create('fwd-rw', { address_type: 'forward', forward_to: [boxes.none.address], antispam: 'subject-rewrite' }),
        ])),
      );
      // Done means live: the map rspamd applies has every one of them.
      expect(await spamVerdict(boxes['fwd-rw'].address, 'ready-fwd-rw')).toMatchObject({ code: 250 });
      expect(await spamVerdict(boxes['fwd-rej'].address, 'ready-fwd-rej')).toMatchObject({ code: 554 });
      console.info(`[rspamd ${engine}] jobs of new addresses took ${ms.join(', ')} ms`);
    });

    it('reject (the default): spam and GTUBE are refused at the end of DATA with rspamd\'s message; a clean message arrives', async () => {
      expect(verdict(await send([boxes.rej.address], message('rej-spam', { spam: true })))).toEqual({ rcpt: [250], data: 354, code: 554, text: '5.7.1 Spam message rejected' });
      expect(verdict(await send([boxes.rej.address], message('rej-gtube', { gtube: true })))).toEqual({ rcpt: [250], data: 354, code: 554, text: '5.7.1 Gtube pattern' });
      expect(verdict(await send([boxes.rej.address], message('rej-clean')))).toMatchObject({ code: 250 });
      const clean = await received(boxes.rej, 'rej-clean');
      expect(headerOf(clean)).toMatch(/^Subject: rej-clean\r?$/m);
      expect(headerOf(clean)).not.toMatch(/^X-Spam:/im);
      expect((await inboxMessages(s.imap, boxes.rej.address, boxes.rej.password)).filter((m) => /rej-(spam|gtube) body/.test(m))).toEqual([]);
    });

    it('none: spam arrives in the INBOX unchanged, without X-Spam (the Sieve script takes rspamd\'s mark off)', async () => {
      expect(verdict(await send([boxes.none.address], message('none-spam', { spam: true })))).toMatchObject({ code: 250 });
      const got = await arrived(boxes.none, 'none-spam');
      expect(got.folder).toBe('INBOX');
      const spam = headerOf(got.text);
      expect(spam).toMatch(/^Subject: none-spam\r?$/m);
      expect(spamHeaders(spam)).toEqual([]);
    });

    it('an X-Spam header the sender wrote is removed from a clean message', async () => {
      expect(verdict(await send([boxes.rej.address], message('rej-forged', { headers: 'X-Spam: Yes\nX-Spam: yes\n' })))).toMatchObject({ code: 250 });
      expect(spamHeaders(headerOf(await received(boxes.rej, 'rej-forged')))).toEqual([]);
    });

    it('subject-rewrite: spam arrives with "***SPAM*** " before its subject and with X-Spam: Yes; a clean message unchanged', async () => {
      expect(verdict(await send([boxes.rw.address], message('rw-spam', { spam: true })))).toMatchObject({ code: 250 });
      const got = await arrived(boxes.rw, 'rw-spam');
      expect(got.folder).toBe('INBOX');
      const spam = headerOf(got.text);
      // rspamd marks it; the mailbox's Sieve script puts the prefix before the subject.
      expect(spam).toMatch(/^Subject: \*\*\*SPAM\*\*\* rw-spam\r?$/m);
      expect(spamHeaders(spam)).toEqual(['X-Spam: Yes']);
      expect(verdict(await send([boxes.rw.address], message('rw-forged', { spam: true, headers: 'X-Spam: No\n' })))).toMatchObject({ code: 250 });
      expect(spamHeaders(headerOf(await received(boxes.rw, 'rw-forged')))).toEqual(['X-Spam: Yes']);
      expect(verdict(await send([boxes.rw.address], message('rw-clean')))).toMatchObject({ code: 250 });
      const clean = headerOf(await received(boxes.rw, 'rw-clean'));
      expect(clean).toMatch(/^Subject: rw-clean\r?$/m);
      expect(clean).not.toMatch(/^X-Spam:/im);
    });

    it('junk-folder: spam is filed into Junk (made when missing) with X-Spam: Yes and its subject unchanged; a clean message in the INBOX without X-Spam', async () => {
      expect(await inboxMessages(s.imap, boxes.junk.address, boxes.junk.password, 'Junk')).toEqual([]);
      expect(verdict(await send([boxes.junk.address], message('junk-spam', { spam: true })))).toMatchObject({ code: 250 });
      const got = await arrived(boxes.junk, 'junk-spam');
      expect(got.folder).toBe('Junk');
      const spam = headerOf(got.text);
      expect(spamHeaders(spam)).toEqual(['X-Spam: Yes']);
      expect(spam).toMatch(/^Subject: junk-spam\r?$/m);
      // The sender's own X-Spam goes: one header, rspamd's.
      expect(verdict(await send([boxes.junk.address], message('junk-forged', { spam: true, headers: 'X-Spam: No\nX-Spam: maybe\n' })))).toMatchObject({ code: 250 });
      expect(spamHeaders(headerOf(await received(boxes.junk, 'junk-forged')))).toEqual(['X-Spam: Yes']);
      expect(verdict(await send([boxes.junk.address], message('junk-clean')))).toMatchObject({ code: 250 });
      const clean = await arrived(boxes.junk, 'junk-clean');
      expect(clean.folder).toBe('INBOX');
      expect(headerOf(clean.text)).not.toMatch(/^X-Spam:/im);
    });

    it('GTUBE is refused in every mode', async () => {
      for (const key of ['junk', 'rw', 'none', 'fwd-none', 'fwd-rw']) {
        expect(verdict(await send([boxes[key].address], message(`gtube-${key}`, { gtube: true }))), key).toEqual({
          rcpt: [250], data: 354, code: 554, text: '5.7.1 Gtube pattern',
        });
      }
    });

    it('a +tag and any letter case of the recipient get its address\'s mode', async () => {
      const [local, d] = boxes.none.address.split('@');
      expect(verdict(await send([`${local}+news@${d}`], message('none-tag', { spam: true })))).toMatchObject({ code: 250 });
      expect(verdict(await send([`${local.toUpperCase()}@${d.toUpperCase()}`], message('none-case', { spam: true })))).toMatchObject({ code: 250 });
      await received(boxes.none, 'none-tag');
      await received(boxes.none, 'none-case');
      const [rl, rd] = boxes.rw.address.split('@');
      expect(verdict(await send([`${rl}+x@${rd}`], message('rw-tag', { spam: true })))).toMatchObject({ code: 250 });
      expect(headerOf(await received(boxes.rw, 'rw-tag'))).toMatch(/^Subject: \*\*\*SPAM\*\*\* rw-tag\r?$/m);
    });

    it('forwards: the mode of the address the mail was sent to decides, not its target\'s', async () => {
      // fwd-none (none) forwards to rej (reject): delivered to rej unchanged.
      expect(verdict(await send([boxes['fwd-none'].address], message('fwd-none-spam', { spam: true })))).toMatchObject({ code: 250 });
      expect(headerOf(await received(boxes.rej, 'fwd-none-spam'))).not.toMatch(/^X-Spam:/im);
      // fwd-rej (reject) forwards to none (none): refused.
      expect(verdict(await send([boxes['fwd-rej'].address], message('fwd-rej-spam', { spam: true })))).toMatchObject({ code: 554 });
      // fwd-rw (subject-rewrite) forwards to none: rspamd rewrites the subject for the forward.
      expect(verdict(await send([boxes['fwd-rw'].address], message('fwd-rw-spam', { spam: true })))).toMatchObject({ code: 250 });
      expect(headerOf(await received(boxes.none, 'fwd-rw-spam'))).toMatch(/^Subject: \*\*\*SPAM\*\*\* fwd-rw-spam\r?$/m);
    });

    it('one verdict per message: refused only when every recipient refuses; else marked, and each mailbox applies its own mode', async () => {
      const where = async (box: { address: string; password: string }, subject: string) => {
        const got = await arrived(box, subject);
        const h = headerOf(got.text);
        return { folder: got.folder, subject: /^Subject: (.*?)\r?$/m.exec(h)?.[1], marked: spamHeaders(h).length > 0 };
      };
      // reject + none mailboxes: accepted (none's mailbox wants it); the reject mailbox files it into
      // Junk, the none mailbox has it as it came.
      expect(verdict(await send([boxes.rej.address, boxes.none.address], message('mix-rej-none', { spam: true })))).toMatchObject({ rcpt: [250, 250], code: 250 });
      expect(await where(boxes.rej, 'mix-rej-none')).toEqual({ folder: 'Junk', subject: 'mix-rej-none', marked: true });
      expect(await where(boxes.none, 'mix-rej-none')).toEqual({ folder: 'INBOX', subject: 'mix-rej-none', marked: false });
      // subject-rewrite + junk-folder + reject + none mailboxes: each its own.
      expect(verdict(await send([boxes.rw.address, boxes.junk.address, boxes.rej.address, boxes.none.address], message('mix-all', { spam: true })))).toMatchObject({ code: 250 });
      expect(await where(boxes.rw, 'mix-all')).toEqual({ folder: 'INBOX', subject: '***SPAM*** mix-all', marked: true });
      expect(await where(boxes.junk, 'mix-all')).toEqual({ folder: 'Junk', subject: 'mix-all', marked: true });
      expect(await where(boxes.rej, 'mix-all')).toEqual({ folder: 'Junk', subject: 'mix-all', marked: true });
      expect(await where(boxes.none, 'mix-all')).toEqual({ folder: 'INBOX', subject: 'mix-all', marked: false });
      // A forward in subject-rewrite decides for all (rspamd rewrites for it): the mailboxes get the
      // rewritten subject, and still file by their own mode.
      expect(verdict(await send([boxes['fwd-rw'].address, boxes.junk.address], message('mix-fwd-rw', { spam: true })))).toMatchObject({ code: 250 });
      expect(await where(boxes.junk, 'mix-fwd-rw')).toEqual({ folder: 'Junk', subject: '***SPAM*** mix-fwd-rw', marked: true });
      // The one gap: a forward in none with reject mailboxes only: accepted unmarked for all, so the
      // reject mailbox finds it in its INBOX.
      expect(verdict(await send([boxes['fwd-none'].address, boxes['fwd-rej'].address], message('mix-fwd-none', { spam: true })))).toMatchObject({ code: 250 });
      expect(await where(boxes.rej, 'mix-fwd-none')).toEqual({ folder: 'INBOX', subject: 'mix-fwd-none', marked: false });
    });

    it('between junk-folder, subject-rewrite and none a PATCHed mode acts on the next message (API guide "E-mail addresses")', async () => {
      const next = async (mode: string, subject: string) => {
        expect((await patchEmail(s.t, token(), boxes.junk.id, { antispam: mode })).status).toBe(200);
        expect(verdict(await send([boxes.junk.address], message(subject, { spam: true })))).toMatchObject({ code: 250 });
        const got = await arrived(boxes.junk, subject);
        return { folder: got.folder, subject: /^Subject: (.*?)\r?$/m.exec(headerOf(got.text))?.[1] };
      };
      expect(await next('none', 'next-none')).toEqual({ folder: 'INBOX', subject: 'next-none' });
      expect(await next('subject-rewrite', 'next-rw')).toEqual({ folder: 'INBOX', subject: '***SPAM*** next-rw' });
      expect(await next('junk-folder', 'next-junk')).toEqual({ folder: 'Junk', subject: 'next-junk' });
    });

    it('right after a new address\'s job is done its spam meets its mode (decision 0019)', async () => {
      const took: number[] = [];
      for (let i = 0; i < 3; i++) {
        took.push(await create(`fresh-junk-${i}`, { address_type: 'mailbox', antispam: 'junk-folder' }));
        expect(await spamVerdict(boxes[`fresh-junk-${i}`].address, `fresh-junk-${i}`), `fresh-junk-${i}`).toMatchObject({ code: 250 });
        expect((await arrived(boxes[`fresh-junk-${i}`], `fresh-junk-${i}`)).folder).toBe('Junk');
      }
      took.push(await create('fresh-fwd-rw', { address_type: 'forward', forward_to: [boxes.none.address], antispam: 'subject-rewrite' }));
      expect(await spamVerdict(boxes['fresh-fwd-rw'].address, 'fresh-fwd-rw')).toMatchObject({ code: 250 });
      expect(headerOf(await received(boxes.none, 'fresh-fwd-rw'))).toMatch(/^Subject: \*\*\*SPAM\*\*\* fresh-fwd-rw\r?$/m);
      console.info(`[rspamd ${engine}] jobs of new addresses in modes the map lists took ${took.join(', ')} ms`);
    });

    it('to and from reject the answer to a PATCH comes once rspamd applies it: the next message meets the new mode (how long: printed)', async () => {
      const toReject = await patchMode('none', 'reject');
      expect(await spamVerdict(boxes.none.address, 'patch-reject')).toMatchObject({ code: 554 });
      const toNone = await patchMode('none', 'none');
      expect(await spamVerdict(boxes.none.address, 'patch-none')).toMatchObject({ code: 250 });
      expect((await arrived(boxes.none, 'patch-none')).folder).toBe('INBOX');
      const toJunk = await patchMode('rej', 'junk-folder');
      expect(await spamVerdict(boxes.rej.address, 'patch-junk')).toMatchObject({ code: 250 });
      expect((await arrived(boxes.rej, 'patch-junk')).folder).toBe('Junk');
      expect(await patchMode('rej', 'reject')).toBeGreaterThan(0);
      console.info(`[rspamd ${engine}] PATCHes of antispam answered after ${toReject} ms (none → reject), ${toNone} ms (reject → none), ${toJunk} ms (reject → junk-folder)`);
      // Every address back in reject, in parallel: the map is "{}", and rspamd drops the rules it had.
      const keys = ['junk', 'rw', 'none', 'fwd-none', 'fwd-rw'];
      await Promise.all(keys.map((key) => patchMode(key, 'reject')));
      for (const key of keys) expect(await spamVerdict(boxes[key].address, `all-reject-${key}`), key).toMatchObject({ code: 554 });
    });

    it('while rspamd is down, mail is accepted unchecked (milter_default_action = accept)', async () => {
      const pid = Number((await fs.readFile(path.join(s.dir, 'mail/rspamd/rspamd.pid'), 'utf8')).trim());
      process.kill(pid, 'SIGTERM');
      // Gone, or a zombie nobody reaps yet (its state letter after the command's parenthesis).
      const alive = async () => {
        const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
        return stat !== null && !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
      };
      await pollUntil(alive, (a) => !a, 'rspamd to stop', 20_000);
      expect(verdict(await send([boxes.rej.address], message('down-spam', { spam: true })))).toMatchObject({ code: 250 });
      expect(headerOf(await received(boxes.rej, 'down-spam'))).toMatch(/^Subject: down-spam\r?$/m);
    });
  });

  it('without rspamd (here: STACK_RSPAMD=off) the stack\'s mail runs without the milter, and up.sh says why', async () => {
    const ts = await freshStore('sqlite');
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-no-rspamd-'));
    await fs.chmod(root, 0o755);
    const dir = path.join(await fs.realpath(root), 'stack');
    try {
      const { run: up } = await upOnFreePorts(dir, { DATABASE_URL: processUrl(ts), STACK_RSPAMD: 'off' });
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
      expect(up.stdout).toContain('\n  rspamd   not started: STACK_RSPAMD=off; mail is not checked for spam\n');
      const stack = JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'));
      expect(Object.keys(stack.mail)).toEqual(['smtp', 'imap', 'lmtp', 'doveadm', 'submission', 'submissions', 'tls_ca', 'policy']);
      expect(await fs.readFile(path.join(dir, 'mail/postfix/main.cf'), 'utf8')).toContain('\nsmtpd_milters = \n');
      const sent = await sendMail(stack.mail.smtp, { from: SENDER, to: ['nobody@unknown.example'], message: message('no-rspamd') });
      expect(sent.greeting).toBe(220);
    } finally {
      await script(DOWN, [dir], {});
      await fs.rm(root, { recursive: true, force: true });
      await ts.drop();
    }
  }, 120_000);
});
