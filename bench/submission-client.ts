// A mail client on the submission port for the benches (bench/email-submission.ts): connect, EHLO,
// STARTTLS, EHLO, AUTH PLAIN, then MAIL/RCPT/DATA per message, QUIT — as a mail program does it,
// over Node's net and tls in this process (spawning Python's smtplib per message would measure
// Python's start). Every reply that is not the one expected throws with the step and the reply.
import net from 'node:net';
import tls from 'node:tls';

export interface SmtpReply {
  code: number;
  text: string;
}

/** A reply that was not the one expected: where, and what the server said. */
export class SmtpRefused extends Error {
  constructor(readonly step: string, readonly reply: SmtpReply) {
    super(`${step}: ${reply.code} ${reply.text}`);
  }
}

export class SubmissionSession {
  private buf = '';
  private waiting: (() => void) | null = null;
  private ended: Error | null = null;
  private socket: net.Socket;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    this.attach(socket);
  }

  /** Reads replies from `socket` from now on (the TLS socket after STARTTLS). */
  private attach(socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.wake();
    });
    socket.on('error', (e) => {
      this.ended = e;
      this.wake();
    });
    socket.on('close', () => {
      this.ended ??= new Error('SMTP connection closed');
      this.wake();
    });
  }

  private wake() {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /**
   * Connect, STARTTLS (the certificate checked against `ca` for the address's host), AUTH PLAIN:
   * `await SubmissionSession.open('127.0.0.1:10017', caPem, 'a@d.example', pw)`.
   */
  static async open(addr: string, ca: Buffer, user: string, password: string): Promise<SubmissionSession> {
    const i = addr.lastIndexOf(':');
    const host = addr.slice(0, i);
    const port = Number(addr.slice(i + 1));
    const socket = net.connect(port, host);
    socket.setTimeout(30_000, () => socket.destroy(new Error('SMTP server silent for 30 s')));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const s = new SubmissionSession(socket);
    try {
      await s.expect('greeting', null, 220);
      await s.expect('EHLO', 'EHLO client.bench.example', 250);
      await s.expect('STARTTLS', 'STARTTLS', 220);
      socket.removeAllListeners('data');
      // An IP address is checked against the certificate's IP SANs; it is not sent as SNI.
      const secure = tls.connect({ socket, ca, host, servername: net.isIP(host) ? '' : host });
      await new Promise<void>((resolve, reject) => {
        secure.once('secureConnect', resolve);
        secure.once('error', reject);
      });
      s.socket = secure;
      s.attach(secure);
      await s.expect('EHLO after STARTTLS', 'EHLO client.bench.example', 250);
      await s.expect('AUTH', `AUTH PLAIN ${Buffer.from(`\0${user}\0${password}`).toString('base64')}`, 235);
      return s;
    } catch (err) {
      s.close();
      throw err;
    }
  }

  /** Reads one (possibly multi-line: "250-…") reply. */
  private async reply(): Promise<SmtpReply> {
    const lines: string[] = [];
    for (;;) {
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) {
        if (this.ended) throw this.ended;
        await new Promise<void>((resolve) => (this.waiting = resolve));
        continue;
      }
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 2);
      lines.push(line.slice(4));
      if (line[3] !== '-') return { code: Number(line.slice(0, 3)), text: lines.join('\n') };
    }
  }

  /** Sends `line` (none: only reads) and throws unless the reply has code `code`. */
  private async expect(step: string, line: string | null, code: number): Promise<SmtpReply> {
    if (line !== null) this.socket.write(`${line}\r\n`);
    const r = await this.reply();
    if (r.code !== code) throw new SmtpRefused(step, r);
    return r;
  }

  /** One message (header and body, CRLF line ends): MAIL, RCPT, DATA; the reply after the final dot, which must be 250. */
  async send(from: string, to: string, message: string): Promise<SmtpReply> {
    await this.expect('MAIL', `MAIL FROM:<${from}>`, 250);
    await this.expect('RCPT', `RCPT TO:<${to}>`, 250);
    await this.expect('DATA', 'DATA', 354);
    const body = message.replace(/^\./gm, '..');
    return this.expect('after DATA', `${body}${body.endsWith('\r\n') ? '' : '\r\n'}.`, 250);
  }

  /** QUIT and close; a failing QUIT is not the message's failure. */
  async quit(): Promise<void> {
    if (!this.ended) await this.expect('QUIT', 'QUIT', 221).catch(() => undefined);
    this.close();
  }

  close(): void {
    this.socket.destroy();
  }
}
