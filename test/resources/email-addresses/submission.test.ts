// Sending mail (API guide "Sending mail"; src/node/render/postfix.ts, rspamd.ts): on the local
// stack's real Postfix, Dovecot and rspamd, a mail client (Python's smtplib) logs in on the
// submission ports — STARTTLS (a node's 587) and implicit TLS (465) — with a mailbox's password or
// an application password, sends to another hosted mailbox and to a forward, and the messages are
// read back over IMAP. Refused, each with the reply a client shows: AUTH before STARTTLS, a wrong
// password, a forward's login (it has no password), an envelope sender or a From: that is not the
// login's own address.
import { expect, it, describe } from 'vitest';
import { ENGINES } from '../../helpers/app.js';
import { inboxMessages } from '../../helpers/imap.js';
import { jobDone } from '../../helpers/jobs.js';
import { describeRspamdStack } from '../../helpers/stack.js';
import { publishedDkim, submit, verifyDkim, type Submission } from '../../helpers/submission.js';
import { pollUntil } from '../../helpers/wait.js';
import { call } from '../../helpers/app.js';
import { postAppPassword, postEmail, useMailSuite } from '../../helpers/email.js';

const message = (from: string, subject: string) => `From: ${from}\r\nTo: someone@hostplane.test\r\nSubject: ${subject}\r\n\r\n${subject} body\r\n`;

describeRspamdStack('sending mail: submission with AUTH through Dovecot, as the login\'s own address', () => {
  describe.each(ENGINES)('on %s', { timeout: 120_000 }, (engine) => {
    const s = useMailSuite(engine);
    const token = () => s.x.end1.token;
    const boxes: Record<string, { id: string; address: string; password: string }> = {};
    let app: { id: string; password: string };

    const create = async (key: string, attributes: Record<string, unknown>) => {
      const r = await postEmail(s.t, token(), { address: `${key}@${s.x.end1.domain}`, ...attributes });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token(), r);
      boxes[key] = { id: r.json.data.id, address: r.json.data.attributes.address_ace, password: r.json.data.attributes.password ?? '' };
    };
    const as = (key: string, o: Partial<Submission> = {}): Submission => ({
      addr: s.submission,
      mode: 'starttls',
      ca: s.tlsCa,
      user: boxes[key].address,
      password: boxes[key].password,
      from: boxes[key].address,
      to: [],
      message: message(boxes[key].address, 'x'),
      ...o,
    });
    /** Waits for the message with `subject` in `box`'s INBOX; returns its text. */
    const received = async (key: string, subject: string) =>
      (await pollUntil(
        async () => (await inboxMessages(s.imap, boxes[key].address, boxes[key].password)).find((m) => m.includes(`${subject} body`)),
        (m) => m !== undefined,
        `"${subject}" for ${boxes[key].address}`,
      ))!;

    const publishedKeys = () => publishedDkim(s.t.app, token(), s.x.end1.domain);

    it('the mailboxes, a forward and an application password exist', async () => {
      await create('a', { address_type: 'mailbox' });
      await create('b', { address_type: 'mailbox' });
      await create('f', { address_type: 'forward', forward_to: [`b@${s.x.end1.domain}`] });
      const r = await postAppPassword(s.t, token(), boxes.a.id, { device: 'Laptop', application: 'Thunderbird' });
      expect(r.status, r.body).toBe(201);
      app = { id: r.json.data.id, password: r.json.data.attributes.password };
    });

    it('the mailbox password over STARTTLS: to another mailbox and to a forward, each delivered', async () => {
      const a = boxes.a.address;
      expect(await submit(as('a', { to: [boxes.b.address], message: message(a, 'starttls-to-b') }))).toEqual({ ok: true, refused: {} });
      expect(await submit(as('a', { to: [boxes.f.address], message: message(a, 'starttls-to-f') }))).toEqual({ ok: true, refused: {} });
      for (const subject of ['starttls-to-b', 'starttls-to-f']) {
        const got = await received('b', subject);
        expect(got).toMatch(new RegExp(`^From: ${a}\\r?$`, 'm'));
        // Signed with the domain's managed key, as the DNS server publishes it.
        expect(await verifyDkim(got, await publishedKeys())).toEqual({ verified: true, signatures: [{ d: s.x.end1.domain, s: 'default' }] });
      }
    });

    it('an application password over implicit TLS: delivered, and its last_used_at is set', async () => {
      const a = boxes.a.address;
      const sent = await submit(as('a', { addr: s.submissions, mode: 'tls', password: app.password, to: [boxes.b.address, boxes.f.address], message: message(a, 'tls-app') }));
      expect(sent).toEqual({ ok: true, refused: {} });
      expect(await received('b', 'tls-app')).toMatch(/^Subject: tls-app\r?$/m);
      const used = await pollUntil(
        async () =>
          (await call(s.t.app, 'GET', `/email-addresses/${boxes.a.id}/application-passwords`, { token: token() })).json.data.find((p: { id: string }) => p.id === app.id)
            .attributes.last_used_at,
        (v) => v !== null,
        'last_used_at of the application password',
      );
      expect(Date.now() - Date.parse(used)).toBeLessThan(120_000);
    });

    it('AUTH before STARTTLS: not offered, and refused when sent anyway', async () => {
      expect(await submit(as('a', { mode: 'plain', to: [boxes.b.address] }))).toEqual({
        ok: false, stage: 'auth', code: 530, text: '5.7.0 Must issue a STARTTLS command first', offered: false,
      });
    });

    it('a wrong password and a forward\'s login are refused at AUTH, as for IMAP', async () => {
      const wrong = { ok: false, stage: 'auth', code: 535, text: '5.7.8 Error: authentication failed: (reason unavailable)' };
      expect(await submit(as('a', { password: 'not-the-password', to: [boxes.b.address] }))).toEqual(wrong);
      expect(await submit(as('f', { password: 'anything-at-all', to: [boxes.b.address] }))).toEqual(wrong);
    });

    it('another envelope sender (another mailbox, a forward, outside) is refused, at the first RCPT (Postfix decides there)', async () => {
      const a = boxes.a.address;
      for (const from of [boxes.b.address, boxes.f.address, `x@outside.example`]) {
        expect(await submit(as('a', { from, to: [boxes.b.address], message: message(a, 'wrong-envelope') }))).toEqual({
          ok: false, stage: 'rcpt', code: 553, text: `5.7.1 <${from}>: Sender address rejected: not owned by user ${a}`,
        });
      }
    });

    it('another From: is refused after DATA with why; a +tag of the own address is the own address', async () => {
      const sent = await submit(as('a', { to: [boxes.b.address], message: message(boxes.b.address, 'wrong-from') }));
      expect(sent).toEqual({ ok: false, stage: 'data', code: 554, text: `5.7.1 From: must be the address you logged in as (${boxes.a.address})` });
      const tagged = boxes.a.address.replace('@', '+news@');
      expect(await submit(as('a', { to: [boxes.b.address], message: message(tagged, 'tagged-from') }))).toEqual({ ok: true, refused: {} });
      expect(await received('b', 'tagged-from')).toMatch(/^Subject: tagged-from\r?$/m);
    });
  });
});
