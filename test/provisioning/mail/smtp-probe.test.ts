// The SMTP recipient probe (src/provisioning/mail/smtp-probe.ts) against a scripted SMTP server on
// loopback: what it sends (EHLO, MAIL FROM:<> with SMTPUTF8 only when needed and offered, RCPT TO
// with the domain in ACE, RSET, QUIT), how it reads replies (multi-line, split across packets, bare
// LF), and which answers are yes (2xx), no (5xx) or an error the job retries (4xx, a refused
// greeting or MAIL FROM, silence). The real Postfix is probed in driver.test.ts.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpProbeError, acceptsRecipient } from '../../../src/provisioning/mail/smtp-probe.js';
import { freePort } from '../../helpers/ports.js';

interface Script {
  greeting?: string;
  /** The reply to one command line, or null to stay silent. */
  reply: (line: string) => string | null;
}

const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that answers by `script`; `lines` collects what clients sent. */
async function fakeSmtp(script: Script): Promise<{ addr: string; lines: string[] }> {
  const lines: string[] = [];
  const server = net.createServer((socket) => {
    let buf = '';
    socket.on('error', () => undefined);
    if (script.greeting !== '') socket.write(script.greeting ?? '220 fake.example ESMTP\r\n');
    socket.on('data', (d) => {
      buf += d.toString('utf8');
      for (let nl = buf.indexOf('\r\n'); nl >= 0; nl = buf.indexOf('\r\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        lines.push(line);
        const answer = script.reply(line);
        if (answer !== null) socket.write(answer);
        if (line === 'QUIT') socket.end();
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { addr: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, lines };
}

/** A Postfix-like dialogue; `rcpt` answers RCPT TO, `ehlo` lists the extensions. */
const dialogue = (rcpt: string, ehlo = ['PIPELINING', 'SIZE 10240000', '8BITMIME']) => (line: string) => {
  if (line.startsWith('EHLO ')) return ['250-fake.example', ...ehlo.map((e, i) => `250${i === ehlo.length - 1 ? ' ' : '-'}${e}`)].join('\r\n') + '\r\n';
  if (line.startsWith('MAIL FROM:')) return '250 2.1.0 Ok\r\n';
  if (line.startsWith('RCPT TO:')) return rcpt;
  if (line === 'RSET') return '250 2.0.0 Ok\r\n';
  if (line === 'QUIT') return '221 2.0.0 Bye\r\n';
  return '502 5.5.2 Error: command not recognized\r\n';
};

describe('acceptsRecipient (SMTP probe)', () => {
  it('250 to RCPT is yes; the session is EHLO, MAIL FROM:<>, RCPT TO, RSET, QUIT', async () => {
    const s = await fakeSmtp({ reply: dialogue('250 2.1.5 Ok\r\n') });
    expect(await acceptsRecipient(s.addr, 'a@d.example', { heloName: 'hp.example' })).toBe(true);
    expect(s.lines).toEqual(['EHLO hp.example', 'MAIL FROM:<>', 'RCPT TO:<a@d.example>', 'RSET', 'QUIT']);
  });

  it('a multi-line 550 is no', async () => {
    const s = await fakeSmtp({ reply: dialogue('550-5.1.1 <nobody@d.example>: Recipient address rejected:\r\n550 5.1.1 User unknown\r\n') });
    expect(await acceptsRecipient(s.addr, 'nobody@d.example')).toBe(false);
    expect(s.lines.slice(-2)).toEqual(['RSET', 'QUIT']);
  });

  it('a 4xx is an error the job retries, with what the server said', async () => {
    const s = await fakeSmtp({ reply: dialogue('450 4.2.0 <a@d.example>: Recipient address rejected: Greylisted\r\n') });
    const err = await acceptsRecipient(s.addr, 'a@d.example').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SmtpProbeError);
    expect((err as Error).message).toBe(`the SMTP server at ${s.addr} answered RCPT TO:<a@d.example> with 450 4.2.0 <a@d.example>: Recipient address rejected: Greylisted`);
  });

  it('a Unicode domain goes as ACE; a non-ASCII local part goes with SMTPUTF8 when the server offers it', async () => {
    const s = await fakeSmtp({ reply: dialogue('250 2.1.5 Ok\r\n', ['PIPELINING', 'SMTPUTF8', '8BITMIME']) });
    expect(await acceptsRecipient(s.addr, 'a@bücher.example')).toBe(true);
    expect(s.lines.filter((l) => /^(MAIL|RCPT)/.test(l))).toEqual(['MAIL FROM:<>', 'RCPT TO:<a@xn--bcher-kva.example>']);
    s.lines.length = 0;
    expect(await acceptsRecipient(s.addr, 'jörg@bücher.example')).toBe(true);
    expect(s.lines.filter((l) => /^(MAIL|RCPT)/.test(l))).toEqual(['MAIL FROM:<> SMTPUTF8', 'RCPT TO:<jörg@xn--bcher-kva.example>']);
  });

  it('a non-ASCII local part without SMTPUTF8 on the server is no, without asking', async () => {
    const s = await fakeSmtp({ reply: dialogue('250 2.1.5 Ok\r\n') });
    expect(await acceptsRecipient(s.addr, 'jörg@d.example')).toBe(false);
    expect(s.lines.some((l) => l.startsWith('MAIL') || l.startsWith('RCPT'))).toBe(false);
  });

  it('a server without EHLO is asked after HELO', async () => {
    const s = await fakeSmtp({
      reply: (line) => (line.startsWith('EHLO') ? '502 5.5.2 Error: command not recognized\r\n' : line.startsWith('HELO') ? '250 fake.example\r\n' : dialogue('250 Ok\r\n')(line)),
    });
    expect(await acceptsRecipient(s.addr, 'a@d.example', { heloName: 'hp.example' })).toBe(true);
    expect(s.lines.slice(0, 2)).toEqual(['EHLO hp.example', 'HELO hp.example']);
  });

  it('replies split across packets and ended by a bare LF are read whole', async () => {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      const send = (parts: string[]) => parts.reduce((p, part) => p.then(() => new Promise<void>((r) => setTimeout(() => socket.write(part, () => r()), 5))), Promise.resolve());
      void send(['22', '0 fake', '.example ESMTP\n']);
      let buf = '';
      socket.on('data', (d) => {
        buf += d.toString();
        for (let nl = buf.indexOf('\r\n'); nl >= 0; nl = buf.indexOf('\r\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 2);
          if (line.startsWith('EHLO')) void send(['250-fake.example\r\n250-PIPE', 'LINING\r', '\n250 8BITMIME\r\n']);
          else if (line.startsWith('MAIL')) void send(['250 Ok\n']);
          else if (line.startsWith('RCPT')) void send(['550-5.1.1 no', '\r\n550 5.1.1 such user\r\n']);
          else if (line === 'RSET') void send(['250 Ok\r\n']);
          else if (line === 'QUIT') void send(['221 Bye\r\n']).then(() => socket.end());
        }
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    expect(await acceptsRecipient(`127.0.0.1:${(server.address() as net.AddressInfo).port}`, 'x@d.example')).toBe(false);
  });

  it('a refused greeting or MAIL FROM, a server that closes, and silence are errors', async () => {
    const busy = await fakeSmtp({ greeting: '554 5.3.2 fake.example busy\r\n', reply: dialogue('250 Ok\r\n') });
    await expect(acceptsRecipient(busy.addr, 'a@d.example')).rejects.toThrow(`the SMTP server at ${busy.addr} answered the greeting with 554 5.3.2 fake.example busy`);
    const noSender = await fakeSmtp({ reply: (l) => (l.startsWith('MAIL') ? '553 5.7.1 no null sender\r\n' : dialogue('250 Ok\r\n')(l)) });
    await expect(acceptsRecipient(noSender.addr, 'a@d.example')).rejects.toThrow(`answered MAIL FROM:<> with 553 5.7.1 no null sender`);
    // Reading (resume) lets the server's side see the client's end and close.
    const closer = net.createServer((socket) => socket.resume().end('220 fake.example\r\n'));
    servers.push(closer);
    await new Promise<void>((r) => closer.listen(0, '127.0.0.1', r));
    const closerAddr = `127.0.0.1:${(closer.address() as net.AddressInfo).port}`;
    await expect(acceptsRecipient(closerAddr, 'a@d.example')).rejects.toThrow(SmtpProbeError);
    const silent = await fakeSmtp({ greeting: '', reply: () => null });
    await expect(acceptsRecipient(silent.addr, 'a@d.example', { timeoutMs: 200 })).rejects.toThrow(`the SMTP server at ${silent.addr} said nothing for 0.2 s`);
    const mute = await fakeSmtp({ reply: (l) => (l.startsWith('RCPT') ? null : dialogue('250 Ok\r\n')(l)) });
    await expect(acceptsRecipient(mute.addr, 'a@d.example', { timeoutMs: 200 })).rejects.toThrow('said nothing for 0.2 s');
  });

  it('a closed port is an error', async () => {
    const port = await freePort();
    await expect(acceptsRecipient(`127.0.0.1:${port}`, 'a@d.example')).rejects.toThrow(
      `could not connect to the SMTP server at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('what is not an address or not host:port is refused before connecting', async () => {
    for (const bad of ['a@d.example>\r\nDATA', 'a d@d.example', '<a@d.example>', 'no-at-sign', 'a@', '@d.example']) {
      await expect(acceptsRecipient('127.0.0.1:1', bad), bad).rejects.toThrow(SmtpProbeError);
    }
    await expect(acceptsRecipient('localhost', 'a@d.example')).rejects.toThrow('"localhost" is not host:port.');
  });
});
