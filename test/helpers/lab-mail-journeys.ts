// Mail that leaves, on the lab (API guide "Sending mail", "Mail client set-up"): from the client
// namespace as a customer's mail program does it — curl for SMTP submission and IMAPS, Debian's
// python3-dkim for the signature, resolving through the lab's DNS.
import { expect } from 'vitest';
import type { Lab } from './lab.js';
import { createMailbox, envelopeHeaders, verifyDkim, type Mailbox } from './lab-mail-checks.js';
import type { DemoCustomer, labClient } from './lab-client.js';

type Client = ReturnType<typeof labClient>;


/**
 * A mailbox sends over 587 (STARTTLS) with its password and over 465 with an application password, to
 * another mailbox and to a forward; the message read over IMAPS carries a DKIM-Signature the lab's
 * DNS verifies. A wrong sender and a login without TLS are refused; SRV and autoconfig name the server.
 */
export async function mailLeaves(lab: Lab, c: Client, shop: DemoCustomer, from: Mailbox): Promise<Mailbox> {
  const to = await createMailbox(c, shop, 'lab-to');
  const fwd = c.api('POST', '/email-addresses', shop.token, { data: { type: 'email-address', attributes: { address: `lab-fwd@${shop.domain}`, address_type: 'forward', forward_to: [to.address] } } });
  expect(fwd.status, JSON.stringify(fwd.body)).toBe(202);
  expect((await c.job(fwd, shop.token)).data.attributes.status).toBe('done');
  const fromId = c.api('GET', `/email-addresses?filter%5Baddress%5D=${encodeURIComponent(from.address)}`, shop.token).body!.data[0].id;
  const app = c.api('POST', `/email-addresses/${fromId}/application-passwords`, shop.token, { data: { type: 'application-password', attributes: { device: 'Laptop', application: 'curl' } } });
  expect(app.status, JSON.stringify(app.body)).toBe(201);

  const mx = c.j.mail.host;
  const mxAddress = c.at('mail');
  const submit = (url: string, password: string, subject: string, envelopeFrom = from.address, extra: string[] = ['--ssl-reqd']) => {
    const message = `${envelopeHeaders()}From: ${from.address}\r\nTo: ${to.address}\r\nSubject: ${subject}\r\n\r\n${subject} body\r\n`;
    return lab.client('sh', [
      '-c',
      `printf '%s' "$0" | curl -sS --cacert "$1" --resolve "$2" --url "$3" --user "$4" --mail-from "$5" --mail-rcpt "$6" --mail-rcpt "$7" ${extra.join(' ')} --upload-file -`,
      message, c.j.ca, `${mx}:${new URL(url).port}:${mxAddress}`, url, `${from.address}:${password}`, envelopeFrom, to.address, `lab-fwd@${shop.domain}`,
    ]);
  };
  const sent587 = submit(`smtp://${mx}:587`, from.password, 'lab-587');
  expect(sent587.code, sent587.stderr).toBe(0);
  const sent465 = submit(`smtps://${mx}:465`, app.body!.data.attributes.password, 'lab-465');
  expect(sent465.code, sent465.stderr).toBe(0);

  // Each is delivered once: Dovecot stores a message for one mailbox once, however many of the
  // message's recipients (the mailbox, the forward to it) lead there.
  const read = (uid: number) => lab.client('curl', ['-s', '--cacert', c.j.ca, ...c.resolve(mx, 993, mxAddress), '--user', `${to.address}:${to.password}`, `imaps://${mx}/INBOX;UID=${uid}`]);
  const subjects: string[] = [];
  for (let uid = 1; uid <= 2; uid++) {
    let got = read(uid);
    for (let i = 0; i < 40 && !got.stdout.includes(' body'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      got = read(uid);
    }
    subjects.push(/^Subject: (.*?)\r?$/m.exec(got.stdout)?.[1] ?? '');
    const signed = new RegExp(`^DKIM-Signature:[^]*?d=${shop.domain.replace(/\./g, '\\.')};`, 'm');
    // Unsigned: what rspamd said of its maps, DKIM and the last messages, for the reader.
    const why = signed.test(got.stdout) ? '' : (await lab.sh('mail', 'grep -i -E "map|dkim" /var/log/rspamd/rspamd.log | tail -n 40; tail -n 15 /var/log/rspamd/rspamd.log')).stdout;
    expect(got.stdout, why).toMatch(signed);
    expect(verifyDkim(lab, got.stdout, c.j.dns)).toBe('verified');
  }
  expect(subjects.sort()).toEqual(['lab-465', 'lab-587']);

  // Another envelope sender, and AUTH without TLS: refused.
  const other = submit(`smtp://${mx}:587`, from.password, 'lab-other', to.address);
  expect(other.code).not.toBe(0);
  expect(other.stderr).toMatch(/553|Sender address rejected|RCPT failed/i);
  const clear = submit(`smtp://${mx}:587`, from.password, 'lab-clear', from.address, []);
  expect(clear.code).not.toBe(0);

  // Mail programs find the server by themselves.
  expect(c.dig(`_submission._tcp.${shop.domain}`, 'SRV')).toBe(`0 1 587 ${mx}.`);
  expect(c.dig(`_imaps._tcp.${shop.domain}`, 'SRV')).toBe(`0 1 993 ${mx}.`);
  const autoconfigHost = `autoconfig.${shop.domain}`;
  const xml = lab.client('curl', ['-sS', '--cacert', c.j.ca, ...c.resolve(autoconfigHost, 443, c.at('api')), `https://${autoconfigHost}/mail/config-v1.1.xml?emailaddress=${from.address}`]);
  expect(xml.stdout, xml.stderr).toContain(`<hostname>${mx}</hostname>\n      <port>587</port>\n      <socketType>STARTTLS</socketType>`);
  expect(c.dig(shop.domain, 'TXT')).toContain(`v=spf1 mx`);
  expect(c.dig(`_dmarc.${shop.domain}`, 'TXT')).toBe('"v=DMARC1; p=quarantine"');
  return to;
}
