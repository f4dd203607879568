// Mail on the lab beyond sending (API guide "Sending mail", "E-mail addresses"; operator guide
// "Sending limits", "Sending: submission and DKIM"): what an incoming message's checks found, the
// hourly limit, a key rotation seen by receivers, and a new mailbox's antispam mode live at `done`.
// From the client namespace with Python's smtplib and curl, as a mail program and another mail
// server do it.
import { expect } from 'vitest';
import type { Lab } from './lab.js';
import type { DemoCustomer, labClient } from './lab-client.js';

type Client = ReturnType<typeof labClient>;
export interface Mailbox {
  address: string;
  password: string;
}

/** Checks a message's DKIM-Signature with dkimpy, the key asked of `dns` with dig (from the client). */
const VERIFY = String.raw`
import dkim, subprocess, sys
dns, msg = sys.argv[1], sys.stdin.buffer.read()
def dnsfunc(name, timeout=5):
    out = subprocess.run(['dig', '@' + dns, name.decode().rstrip('.'), 'TXT', '+short'], capture_output=True, text=True).stdout
    return ''.join(part for line in out.splitlines() for part in line.split('"')[1::2]).encode()
print('verified' if dkim.verify(msg, dnsfunc=dnsfunc) else 'not verified')
`;

/** 'verified' when the message's DKIM-Signature verifies with the key DNS server `dns` serves. */
export function verifyDkim(lab: Lab, message: string, dns: string): string {
  const r = lab.client('sh', ['-c', `printf '%s' "$0" | /usr/bin/python3 -c "$1" "$2"`, message, VERIFY, dns]);
  return r.stdout.trim() || r.stderr;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Date: and Message-ID:, as every mail program writes them (without, spam filters count it against a message). */
export const envelopeHeaders = (): string => `Date: ${new Date().toUTCString()}\r\nMessage-ID: <${Date.now()}.${Math.random().toString(36).slice(2)}@client.example>\r\n`;

/** A mailbox of `shop` made through the API, its job done; its generated password. */
export async function createMailbox(c: Client, shop: DemoCustomer, local: string, more: Record<string, unknown> = {}): Promise<Mailbox> {
  const address = `${local}@${shop.domain}`;
  const post = c.api('POST', '/email-addresses', shop.token, { data: { type: 'email-address', attributes: { address, address_type: 'mailbox', ...more } } });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
  return { address, password: post.body!.data.attributes.password as string };
}

/**
 * One SMTP session from the client (Python's smtplib): port 25 without a login, or 587 with STARTTLS
 * and AUTH. Sends `message` to `rcpt`, or with `message` null only asks for each recipient and
 * resets. Prints every recipient's answer and the end of the session.
 */
const SMTP = String.raw`
import json, smtplib, ssl, sys
a = json.loads(sys.argv[1])
rcpt = {}
try:
    s = smtplib.SMTP(a['address'], a['port'], timeout=60)
    s._host = a['name']  # TLS checks the server's name; the client resolves no lab names
    s.ehlo('client.example')
    if a.get('login'):
        s.starttls(context=ssl.create_default_context(cafile=a['ca']))
        s.ehlo('client.example')
        s.login(a['login'], a['password'])
    code, text = s.mail(a['from'])
    for r in a['rcpt']:
        c, t = s.rcpt(r)
        rcpt[r] = [c, t.decode()]
    if a['message'] is None:
        s.rset()
        end = [0, 'reset']
    else:
        c, t = s.data(a['message'].encode())
        end = [c, t.decode()]
    s.quit()
except smtplib.SMTPException as e:
    end = [getattr(e, 'smtp_code', -1), str(e)]
print(json.dumps({'rcpt': rcpt, 'end': end}))
`;

export interface SmtpSession {
  port: 25 | 587;
  login?: Mailbox;
  from: string;
  rcpt: string[];
  message: string | null;
}

export function smtpSession(lab: Lab, c: Client, s: SmtpSession): { rcpt: Record<string, [number, string]>; end: [number, string] } {
  const args = { address: c.at('mail'), name: c.j.mail.host, port: s.port, ca: c.j.ca, login: s.login?.address, password: s.login?.password, from: s.from, rcpt: s.rcpt, message: s.message };
  const run = lab.client('/usr/bin/python3', ['-c', SMTP, JSON.stringify(args)]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { rcpt: Record<string, [number, string]>; end: [number, string] };
}

/** The message of `box` that IMAP SEARCH `criteria` finds first, over IMAPS, waiting up to 20 s for it. */
export async function readFound(lab: Lab, c: Client, box: Mailbox, criteria: string, folder = 'INBOX'): Promise<string> {
  const mx = c.j.mail.host;
  const imap = (url: string) => lab.client('curl', ['-s', '--cacert', c.j.ca, ...c.resolve(mx, 993, c.at('mail')), '--user', `${box.address}:${box.password}`, url]).stdout;
  for (let i = 0; i < 40; i++) {
    const uid = /^\* SEARCH (\d+)/m.exec(imap(`imaps://${mx}/${folder}?${encodeURIComponent(criteria)}`))?.[1];
    if (uid) return imap(`imaps://${mx}/${folder};UID=${uid}`);
    await sleep(500);
  }
  throw new Error(`no message ${criteria} in ${folder} of ${box.address}`);
}

/** The Authentication-Results header the mail server added (unfolded), or '' when there is none. */
export const authResults = (message: string): string => (/^Authentication-Results: ([^]*?)\r?\n(?=\S)/m.exec(message)?.[1] ?? '').replace(/\r?\n\s+/g, ' ');

const escape = (s: string) => s.replace(/[.+]/g, '\\$&');

/**
 * Incoming mail is checked through the lab's DNS: a message `from` signed (read back from `to`'s
 * mailbox) and delivered again at port 25 from the client passes DKIM and DMARC while SPF fails
 * (the client is not the domain's mail server); the same From: unsigned fails DMARC too, with the
 * domain's policy.
 */
export async function inboundChecked(lab: Lab, c: Client, from: Mailbox, to: Mailbox, signedSubject: string): Promise<void> {
  const domain = from.address.split('@')[1];
  const stored = await readFound(lab, c, to, `SUBJECT ${signedSubject}`);
  // What the sender's server sent: the receiving server's trace headers go; a header of our own on
  // top, which the signature does not cover.
  const sent = `X-Lab: again\r\n${stored.slice(stored.search(/^DKIM-Signature:/m))}`;
  expect(smtpSession(lab, c, { port: 25, from: from.address, rcpt: [to.address], message: sent }).end[0]).toBe(250);
  const again = authResults(await readFound(lab, c, to, 'HEADER X-Lab again'));
  expect(again).toMatch(new RegExp(`dkim=pass[^;]*header\\.d=${escape(domain)}`));
  expect(again).toMatch(new RegExp(`dmarc=pass[^;]*header\\.from=${escape(domain)}`));
  expect(again).toMatch(/spf=fail/);

  const forged = `${envelopeHeaders()}From: ${from.address}\r\nTo: ${to.address}\r\nSubject: lab-forged\r\n\r\nnot from the domain's server\r\n`;
  expect(smtpSession(lab, c, { port: 25, from: from.address, rcpt: [to.address], message: forged }).end[0]).toBe(250);
  const results = authResults(await readFound(lab, c, to, 'SUBJECT lab-forged'));
  expect(results).toMatch(new RegExp(`spf=fail[^;]*smtp\\.mailfrom=${escape(from.address)}`));
  expect(results).toMatch(new RegExp(`dmarc=fail[^;]*header\\.from=${escape(domain)} \\(policy=quarantine\\)`));
  expect(results).toMatch(/dkim=none/);
}

/**
 * The hourly limit (plan default 500 recipients): a new mailbox asking for 501 recipients in one
 * message over 587 has the 501st deferred with a reply that says why; nothing is sent (reset).
 */
export async function limitDefers(lab: Lab, c: Client, shop: DemoCustomer, to: Mailbox): Promise<void> {
  const sender = await createMailbox(c, shop, 'lab-many');
  const [user, domain] = to.address.split('@');
  const rcpt = Array.from({ length: 501 }, (_, i) => `${user}+${i + 1}@${domain}`);
  const asked = smtpSession(lab, c, { port: 587, login: sender, from: sender.address, rcpt, message: null });
  const refused = Object.entries(asked.rcpt).filter(([, [code]]) => code !== 250);
  // Postfix names the recipient first, then the policy service's reason.
  const why = `<${sender.address}> has sent to 500 recipients in the last hour (the limit of its plan); try again later`;
  expect(refused).toEqual([[rcpt[500], [450, `4.7.1 <${rcpt[500]}>: Recipient address rejected: ${why}`]]]);
}

/**
 * A rotation as receivers see it: `dkim-rotate` on the API host, then a message a second from `sender`
 * until one is signed with the new selector; every one verifies against the key both DNS servers
 * serve at that moment (a message is never signed with a key the DNS does not serve).
 */
export async function rotationSeenByReceivers(lab: Lab, c: Client, sender: Mailbox, to: Mailbox): Promise<void> {
  const domain = sender.address.split('@')[1];
  // The operator CLI on the API host reaches the store with its settings (operator guide).
  const rotate = await lab.sh('api', `set -a; . /etc/hostplane/hostplane.env; set +a; hostplane admin domain dkim-rotate ${domain} --json`);
  expect(rotate.code, rotate.stderr).toBe(0);
  const next = (JSON.parse(rotate.stdout) as { selector: string }).selector;
  const selectors: string[] = [];
  for (let i = 0; i < 90 && selectors.at(-1) !== next; i++) {
    const subject = `lab-rotation-${i}`;
    const message = `${envelopeHeaders()}From: ${sender.address}\r\nTo: ${to.address}\r\nSubject: ${subject}\r\n\r\n${subject}\r\n`;
    expect(smtpSession(lab, c, { port: 587, login: sender, from: sender.address, rcpt: [to.address], message }).end[0]).toBe(250);
    const got = await readFound(lab, c, to, `SUBJECT ${subject}`);
    for (const dns of [c.j.dns, c.j.dns_secondary!]) expect(verifyDkim(lab, got, dns), `${subject} at ${dns}`).toBe('verified');
    selectors.push(/^DKIM-Signature:[^]*?\bs=([^;\s]+)/m.exec(got)?.[1] ?? '');
    await sleep(1000);
  }
  expect(selectors.at(-1)).toBe(next);
  expect(selectors[0]).not.toBe(next);
}

/**
 * A new mailbox's antispam mode is live when its job is done: spam sent at once to a mailbox made
 * with `antispam: junk-folder` is delivered into its Junk folder, not refused as in `reject`. The mail
 * host has a rule of its operator's that scores "X-Lab-Spam: yes" over the refusal score.
 */
export async function spamModeLiveAtDone(lab: Lab, c: Client, shop: DemoCustomer): Promise<void> {
  const create = (local: string, antispam: string) => createMailbox(c, shop, local, { antispam });
  const spam = (to: string) => smtpSession(lab, c, { port: 25, from: 'someone@elsewhere.example', rcpt: [to], message: `${envelopeHeaders()}From: someone@elsewhere.example\r\nTo: ${to}\r\nSubject: lab-spam\r\nX-Lab-Spam: yes\r\n\r\nbuy now\r\n` });
  const refused = spam((await create('lab-strict', 'reject')).address);
  expect(refused.end[0], refused.end[1]).toBe(554);
  const junk = await create('lab-junk', 'junk-folder');
  const taken = spam(junk.address);
  expect(taken.end[0], taken.end[1]).toBe(250);
  expect(await readFound(lab, c, junk, 'SUBJECT lab-spam', 'Junk')).toMatch(/^X-Spam: Yes\r?$/m);
}

/** The operator's rule for spamModeLiveAtDone, in rspamd's local.d (reloaded, not restarted). */
export const LAB_SPAM_RULE = `LAB_SPAM {
  re = "X-Lab-Spam=/^yes$/iH";
  score = 20.0;
  description = "the lab's spam";
}
`;
