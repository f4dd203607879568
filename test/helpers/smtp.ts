// A tiny SMTP client over a plain socket for the mail tests (docs/decisions/0009-mail-directory.md;
// RFC 5321): EHLO, MAIL FROM, RCPT TO (each), DATA, QUIT, returning every reply code so a test
// asserts where a message was accepted or refused. No npm client library on purpose.
import net from 'node:net';

export interface SmtpReply {
  code: number;
  /** The reply's lines without their codes, joined by "\n". */
  text: string;
}

export interface SmtpSession {
  greeting: number;
  ehlo: number;
  mail: number;
  /** One reply per recipient, in order. */
  rcpt: SmtpReply[];
  /** DATA's 354 (null when no recipient was accepted: DATA is not sent). */
  data: number | null;
  /** The reply after the message's final dot (null when DATA was not sent or refused). */
  message: SmtpReply | null;
  quit: number;
}

export class SmtpClient {
  private buf = '';
  private waiting: (() => void) | null = null;
  private ended: Error | null = null;

  private constructor(private readonly socket: net.Socket) {
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

  static async connect(addr: string): Promise<{ client: SmtpClient; greeting: SmtpReply }> {
    const i = addr.lastIndexOf(':');
    const socket = net.connect(Number(addr.slice(i + 1)), addr.slice(0, i));
    socket.setTimeout(15_000, () => socket.destroy(new Error('SMTP server silent for 15 s')));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new SmtpClient(socket);
    return { client, greeting: await client.reply() };
  }

  /** Reads one (possibly multi-line: "250-…") reply. */
  async reply(): Promise<SmtpReply> {
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

  async command(line: string): Promise<SmtpReply> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /** The message after DATA's 354: lines dot-stuffed, CRLF line ends, the final dot. */
  async message(text: string): Promise<SmtpReply> {
    const body = text.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
    this.socket.write(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`);
    return this.reply();
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * One message through a whole session: `sendMail('127.0.0.1:2525', { from, to: [...], message })`.
 * `message` is the header and body ("Subject: …\n\nhello\n").
 */
export async function sendMail(addr: string, m: { from: string; to: string[]; message: string }): Promise<SmtpSession> {
  const { client, greeting } = await SmtpClient.connect(addr);
  try {
    const ehlo = await client.command('EHLO client.hostplane.test');
    const mail = await client.command(`MAIL FROM:<${m.from}>`);
    const rcpt: SmtpReply[] = [];
    for (const to of m.to) rcpt.push(await client.command(`RCPT TO:<${to}>`));
    let data: number | null = null;
    let message: SmtpReply | null = null;
    if (rcpt.some((r) => r.code >= 200 && r.code < 300)) {
      data = (await client.command('DATA')).code;
      if (data === 354) message = await client.message(m.message);
    } else {
      await client.command('RSET');
    }
    const quit = (await client.command('QUIT')).code;
    return { greeting: greeting.code, ehlo: ehlo.code, mail: mail.code, rcpt, data, message, quit };
  } finally {
    client.close();
  }
}
