// The autoresponder on the mail server (API guide "E-mail addresses";
// docs/decisions/0011-antispam-and-autoresponder.md): through HTTP on both engines, then SMTP and
// IMAP against the local stack's Postfix and Dovecot with Pigeonhole, which read each mailbox's
// Sieve script from the mail directory. An active autoresponder answers (the reply arrives in the
// sender's mailbox on the same stack) once per sender per day; inactive it answers nothing; list
// mail gets nothing; mail that came through a forward or a +tag is answered; a changed text is the
// next reply. Dates: the mail server's script carries the guard at 00:00 Berlin (as UTC), so a
// reached `activates` answers and a reached `expires` does not, before the scheduled turn has
// changed anything; the turn then shows the same in the API. (Dovecot runs on the machine's clock,
// so the guards stand on either side of now; the instants of winter, summer and both DST-change
// midnights are in sieve.test.ts and the API's switching at them in autoresponder.test.ts.)
import { describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp } from '../../helpers/app.js';
import { inboxMessages } from '../../helpers/imap.js';
import { publishedDkim, verifyDkim } from '../../helpers/submission.js';
import { sendMail } from '../../helpers/smtp.js';
import { describeMailStack } from '../../helpers/stack.js';
import { jobDone } from '../../helpers/jobs.js';
import { pollUntil, sleep } from '../../helpers/wait.js';
import { patchEmail, postEmail, useMailSuite } from '../../helpers/email.js';
import { autoresponderTurn } from '../../../src/resources/email-addresses/email-addresses.autoresponder.js';
import { berlinToday } from '../../../src/resources/email-addresses/email-addresses.rules.js';

const DAY = 86_400_000;
/** The Berlin date `days` from now: `berlinDate(-1)` is yesterday. */
const berlinDate = (days: number) => berlinToday(new Date(Date.now() + days * DAY));

describeMailStack('the autoresponder on Dovecot (Sieve vacation from the mail directory)', () => {
  describe.each(ENGINES)('on %s', { timeout: 120_000 }, (engine) => {
    const s = useMailSuite(engine);
    const token = () => s.x.end1.token;
    const domain = () => s.x.end1.domain;
    let n = 0;

    interface Box {
      id: string;
      address: string;
      password: string;
    }
    /**
     * A live address (its job done), with `patches` applied one PATCH each (API guide "E-mail
     * addresses": one autoresponder key per request).
     */
    const created = async (attributes: Record<string, unknown>, patches: Array<Record<string, unknown>> = []): Promise<Box> => {
      const r = await postEmail(s.t, token(), { address: `ar${++n}@${domain()}`, ...attributes });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token(), r);
      const box = { id: r.json.data.id as string, address: r.json.data.attributes.address_ace as string, password: (r.json.data.attributes.password as string) ?? '' };
      for (const p of patches) {
        const u = await patchEmail(s.t, token(), box.id, p);
        expect(u.status, u.body).toBe(200);
      }
      return box;
    };
    const mailbox = (patches: Array<Record<string, unknown>> = []) => created({ address_type: 'mailbox' }, patches);
    const away = (text: string) => mailbox([{ autoresponder: { text } }, { autoresponder: { active: true } }]);

    const send = async (from: string, to: string, subject: string, headers = '') => {
      const r = await sendMail(s.smtp, { from, to: [to], message: `From: ${from}\nTo: ${to}\nSubject: ${subject}\n${headers}\n${subject} body\n` });
      expect(r.message?.code, JSON.stringify(r)).toBe(250);
    };
    const messages = (b: Box) => inboxMessages(s.imap, b.address, b.password);
    const replies = async (b: Box) => (await messages(b)).filter((m) => /^Auto-Submitted: auto-replied/im.test(m));
    /** Waits until `b` holds `count` messages (delivered: its Sieve script has run). */
    const delivered = (b: Box, count: number) => pollUntil(() => messages(b), (m) => m.length >= count, `${count} message(s) for ${b.address}`);
    const repliesArrived = (b: Box, count: number) => pollUntil(() => replies(b), (r) => r.length >= count, `${count} autoresponder repl(ies) for ${b.address}`);
    /**
     * Everything sent so far has been answered or not: a fresh sender writes to an active
     * autoresponder and waits for its reply, which Postfix delivers after the earlier ones.
     */
    const settled = async () => {
      const probe = await mailbox();
      const target = await away('Probe.');
      await send(probe.address, target.address, 'probe');
      await repliesArrived(probe, 1);
      await sleep(200);
    };

    it('an active autoresponder answers once per sender and day; the reply arrives in the sender\'s mailbox (API guide "E-mail addresses")', async () => {
      const a = await away('Away until Monday. "Quoted" \\ text.');
      const b = await mailbox();
      const c = await mailbox();
      await send(b.address, a.address, 'first');
      const [reply] = await repliesArrived(b, 1);
      expect(reply).toMatch(new RegExp(`^From: .*${a.address}`, 'im'));
      expect(reply).toMatch(new RegExp(`^To: .*${b.address}`, 'im'));
      expect(reply).toMatch(/^Subject: Auto: first/im);
      expect(reply).toContain('Away until Monday. "Quoted" \\ text.');
      // It leaves through Postfix from the mail server itself: signed with the domain's key (API guide "Sending mail").
      if (s.rspamd) expect(await verifyDkim(reply, await publishedDkim(s.t.app, token(), domain()))).toEqual({ verified: true, signatures: [{ d: domain(), s: 'default' }] });
      // Again from the same sender the same day: delivered, not answered; another sender is.
      await send(b.address, a.address, 'second');
      await delivered(a, 2);
      await send(c.address, a.address, 'third');
      await repliesArrived(c, 1);
      await settled();
      expect(await replies(b)).toHaveLength(1);
      expect((await messages(a)).map((m) => /^Subject: (.*)$/m.exec(m)?.[1].trim())).toEqual(['first', 'second', 'third']);
    });

    it('an inactive autoresponder answers nothing; list and bulk mail get no reply from an active one (API guide "E-mail addresses")', async () => {
      const off = await mailbox([{ autoresponder: { text: 'Not sent.' } }]);
      const on = await away('Away.');
      const b = await mailbox();
      const c = await mailbox();
      const d = await mailbox();
      await send(b.address, off.address, 'to an inactive one');
      await send(c.address, on.address, 'a list', 'List-Id: <news.lists.example>\n');
      await send(d.address, on.address, 'bulk', 'Precedence: bulk\n');
      await delivered(off, 1);
      await delivered(on, 2);
      await settled();
      expect(await replies(b)).toEqual([]);
      expect(await replies(c)).toEqual([]);
      expect(await replies(d)).toEqual([]);
    });

    it('mail that reached the mailbox through a forward or a +tag is answered too (API guide "E-mail addresses")', async () => {
      const a = await away('Through any address.');
      const fwd = await created({ address_type: 'forward', forward_to: [a.address] });
      const b = await mailbox();
      const c = await mailbox();
      await send(b.address, fwd.address, 'via the forward');
      await send(c.address, a.address.replace('@', '+tag@'), 'via a tag');
      expect((await repliesArrived(b, 1))[0]).toContain('Through any address.');
      expect((await repliesArrived(c, 1))[0]).toContain('Through any address.');
    });

    it('a PATCHed text is the next reply; switched off, the next sender gets none (API guide "E-mail addresses")', async () => {
      const a = await away('Old text.');
      const b = await mailbox();
      await send(b.address, a.address, 'one');
      expect((await repliesArrived(b, 1))[0]).toContain('Old text.');
      expect((await patchEmail(s.t, token(), a.id, { autoresponder: { text: 'New text.' } })).status).toBe(200);
      const c = await mailbox();
      await send(c.address, a.address, 'two');
      const [reply] = await repliesArrived(c, 1);
      expect(reply).toContain('New text.');
      expect(reply).not.toContain('Old text.');
      expect((await patchEmail(s.t, token(), a.id, { autoresponder: { active: false } })).status).toBe(200);
      const d = await mailbox();
      await send(d.address, a.address, 'three');
      await delivered(a, 3);
      await settled();
      expect(await replies(d)).toEqual([]);
    });

    it('the mail server switches at 00:00 Berlin of activates and expires on its own; the scheduled turn then shows it in the API (API guide "E-mail addresses")', async () => {
      // A clock three days back lets the API take dates whose midnight has passed for the mail server.
      const past = await createTestApp(engine, {}, { store: { store: s.t.store, url: s.databaseUrl, drop: async () => undefined }, now: () => new Date(Date.now() - 3 * DAY) });
      try {
        const patch = async (b: Box, autoresponder: Record<string, unknown>) => {
          const r = await call(past.app, 'PATCH', `/email-addresses/${b.id}`, { token: token(), body: { data: { type: 'email-address', id: b.id, attributes: { autoresponder } } } });
          expect(r.status, r.body).toBe(200);
        };
        const reached = await mailbox([{ autoresponder: { text: 'Activated at midnight.' } }]);
        await patch(reached, { activates: berlinDate(-1) });
        const notYet = await mailbox([{ autoresponder: { text: 'Not before tomorrow.' } }, { autoresponder: { activates: berlinDate(1) } }]);
        const ended = await away('Expired at midnight.');
        await patch(ended, { expires: berlinDate(-1) });
        const running = await away('Until tomorrow.');
        expect((await patchEmail(s.t, token(), running.id, { autoresponder: { expires: berlinDate(1) } })).status).toBe(200);

        const senders = await Promise.all([mailbox(), mailbox(), mailbox(), mailbox()]);
        const targets = [reached, notYet, ended, running];
        for (const [i, b] of senders.entries()) await send(b.address, targets[i].address, `date case ${i}`);
        expect((await repliesArrived(senders[0], 1))[0]).toContain('Activated at midnight.');
        expect((await repliesArrived(senders[3], 1))[0]).toContain('Until tomorrow.');
        await settled();
        expect(await replies(senders[1])).toEqual([]);
        expect(await replies(senders[2])).toEqual([]);

        // The turn (every minute under the suite's worker, here at once) shows the reached dates in the
        // API; what it shows before depends on whether the worker's turn came already, so only after.
        const state = async (b: Box) => (await call(s.t.app, 'GET', `/email-addresses/${b.id}`, { token: token() })).json.data.attributes.autoresponder;
        await autoresponderTurn(s.t.store, new Date());
        expect(await state(reached)).toEqual({ text: 'Activated at midnight.', active: true, activates: null, expires: null });
        expect(await state(ended)).toEqual({ text: 'Expired at midnight.', active: false, activates: null, expires: null });
        expect(await state(notYet)).toEqual({ text: 'Not before tomorrow.', active: false, activates: berlinDate(1), expires: null });
        expect(await state(running)).toEqual({ text: 'Until tomorrow.', active: true, activates: null, expires: berlinDate(1) });
        // The mail server agrees after the turn rewrote the scripts.
        const later = await Promise.all([mailbox(), mailbox()]);
        await send(later[0].address, reached.address, 'after the turn');
        await send(later[1].address, ended.address, 'after the turn');
        expect((await repliesArrived(later[0], 1))[0]).toContain('Activated at midnight.');
        await settled();
        expect(await replies(later[1])).toEqual([]);
      } finally {
        await past.close();
      }
    });
  });
});
