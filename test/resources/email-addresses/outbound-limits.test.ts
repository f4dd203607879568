// Recipients per mailbox and hour on the local stack (API guide "Plans", "Sending mail";
// docs/decisions/0020-outbound-limits.md): a mail client (Python's smtplib) logs in on the
// submission port and sends; Postfix asks hostplane's mail policy service, which reads the plan's
// number from the mail directory. The recipient past the limit gets a 450 that says why and the
// client keeps it; a plan setting changed with the CLI applies to the next message; another
// mailbox and mail arriving on port 25 are not limited; the default 500 defers the 501st. With the
// policy service gone, Postfix defers every recipient of a login (fail closed, nothing lost).
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/app.js';
import { runCli } from '../../helpers/cli.js';
import { postEmail, useMailSuite } from '../../helpers/email.js';
import { inboxMessages } from '../../helpers/imap.js';
import { jobDone } from '../../helpers/jobs.js';
import { sendMail } from '../../helpers/smtp.js';
import { describeMailStack } from '../../helpers/stack.js';
import { submit } from '../../helpers/submission.js';
import { pollUntil } from '../../helpers/wait.js';

const outside = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@limits.example`);
/** What the client reads after 450 for recipient `rcpt` (Postfix names the recipient first). */
const over = (rcpt: string, user: string, sent: number) =>
  `4.7.1 <${rcpt}>: Recipient address rejected: <${user}> has sent to ${sent} recipients in the last hour (the limit of its plan); try again later`;

describeMailStack('recipients per mailbox and hour through submission', () => {
  describe.each(ENGINES)('on %s', { timeout: 180_000 }, (engine) => {
    const s = useMailSuite(engine);
    const boxes: Record<string, { address: string; password: string }> = {};
    let n = 0;

    const create = async (key: string) => {
      const r = await postEmail(s.t, s.x.end1.token, { address: `limit${++n}@${s.x.end1.domain}`, address_type: 'mailbox' });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, s.x.end1.token, r);
      boxes[key] = { address: r.json.data.attributes.address_ace, password: r.json.data.attributes.password };
    };
    const send = (key: string, to: string[], subject = 'limits') => {
      const { address, password } = boxes[key];
      const message = `From: ${address}\r\nTo: undisclosed-recipients:;\r\nSubject: ${subject}\r\n\r\n${subject} body\r\n`;
      return submit({ addr: s.submission, mode: 'starttls', ca: s.tlsCa, user: address, password, from: address, to, message });
    };
    /** `hostplane admin plan set <end1's plan> --recipients-per-hour <n>`, as an operator runs it. */
    const setLimit = async (perHour: number) => {
      const r = await runCli(['admin', 'plan', 'set', s.x.resellerPlanId, '--recipients-per-hour', String(perHour), '--json'], { DATABASE_URL: s.databaseUrl, LOG_LEVEL: 'silent' });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: s.x.resellerPlanId, recipients_per_hour: perHour });
    };

    it('with a limit of 3 set by the CLI, the 4th recipient within the hour is deferred with a 450 that says why; the message goes to the first 3', async () => {
      await create('a');
      await create('b');
      await setLimit(3);
      const a = boxes.a.address;
      const [first, ...rest] = outside(3, 'a');
      const sent = await send('a', [boxes.b.address, first, ...rest], 'first three');
      expect(sent).toEqual({ ok: true, refused: { [rest[1]]: [450, over(rest[1], a, 3)] } });
      await pollUntil(
        async () => (await inboxMessages(s.imap, boxes.b.address, boxes.b.password)).some((m) => m.includes('first three body')),
        (v) => v,
        'the message accepted before the limit, in b\'s INBOX',
      );
      // The client retries the deferred recipient: still deferred within the hour.
      expect(await send('a', [rest[1]])).toEqual({ ok: false, stage: 'rcpt', code: 450, text: over(rest[1], a, 3) });
    });

    it('a higher setting applies to the next message: the client\'s retry goes through', async () => {
      await setLimit(5);
      expect(await send('a', outside(1, 'retry'))).toEqual({ ok: true, refused: {} });
      expect(await send('a', outside(2, 'more'))).toEqual({ ok: true, refused: { 'more1@limits.example': [450, over('more1@limits.example', boxes.a.address, 5)] } });
    });

    it('another mailbox of the same plan counts for itself', async () => {
      await create('c');
      expect(await send('c', outside(5, 'c'))).toEqual({ ok: true, refused: {} });
    });

    it('mail arriving on port 25 (no login) is never counted or limited', async () => {
      for (let i = 0; i < 3; i++) {
        const r = await sendMail(s.smtp, { from: 'sender@outside.example', to: [boxes.a.address, boxes.a.address.replace('@', '+x@')], message: `Subject: in ${i}\n\nin\n` });
        expect(r.rcpt.map((x) => x.code)).toEqual([250, 250]);
        expect(r.message?.code).toBe(250);
      }
    });

    it('the default 500: a message to 501 recipients is accepted for 500 and deferred for the 501st', async () => {
      await setLimit(500);
      await create('d');
      const to = outside(501, 'd');
      expect(await send('d', to)).toEqual({ ok: true, refused: { [to[500]]: [450, over(to[500], boxes.d.address, 500)] } });
    });

    it('while the policy service is down, recipients of logins are deferred (451) and port 25 still takes mail (last: it stops the stack\'s service)', async () => {
      const pid = Number((await fs.readFile(path.join(s.dir, 'mail/policy/policy.pid'), 'utf8')).trim());
      const port = Number(s.policy.split(':')[1]);
      process.kill(pid, 'SIGTERM');
      const listening = () => new Promise<boolean>((resolve) => net.connect(port, '127.0.0.1').once('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).once('error', () => resolve(false)));
      await pollUntil(listening, (up) => !up, 'the mail policy service to stop');
      const [to] = outside(1, 'down');
      expect(await send('c', [to])).toEqual({ ok: false, stage: 'rcpt', code: 451, text: `4.3.0 <${to}>: Recipient address rejected: The sending limits cannot be checked at the moment; try again later` });
      const r = await sendMail(s.smtp, { from: 'sender@outside.example', to: [boxes.a.address], message: 'Subject: still in\n\nin\n' });
      expect(r.rcpt.map((x) => x.code)).toEqual([250]);
    });
  });
});
