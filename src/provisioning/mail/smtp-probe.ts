// Whether a mail server's SMTP service accepts an address as a recipient (API guide "E-mail
// addresses"; docs/decisions/0009-mail-directory.md): one SMTP session (RFC 5321) of EHLO, MAIL
// FROM:<>, RCPT TO:<address>, then RSET and QUIT — no message is sent. A 2xx to RCPT is yes, a 5xx
// no; a 4xx (greylisting, a map that is not reachable) or anything else is thrown, so the job asks
// again later. The null sender is the bounce sender: it passes sender checks and never loops.
import net from 'node:net';
import os from 'node:os';
import { domainToASCII } from 'node:url';
import { parseHostPort } from '../../host-port.js';

export interface SmtpProbeOptions {
  /** Per step: connect, and each reply (default 15 000 ms). */
  timeoutMs?: number;
  /** The EHLO name (default this host's name). */
  heloName?: string;
}

/** The server said something that is no answer about the recipient (4xx, a refused MAIL FROM, a timeout…). */
export class SmtpProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmtpProbeError';
  }
}

interface Reply {
  code: number;
  lines: string[];
}

const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_REPLY_BYTES = 64 * 1024;

/** `splitHostPort('[::1]:25')` → `{ host: '::1', port: 25 }`. */
export function splitHostPort(addr: string): { host: string; port: number } {
  const hp = parseHostPort(addr);
  if (!hp) throw new SmtpProbeError(`"${addr}" is not host:port.`);
  return hp;
}

/**
 * The address as it goes on the wire: the domain in ACE (the mail directory's keys are ACE), the
 * local part as it is. Throws on what cannot be an address (CR, LF, <, >, spaces: no command
 * injection).
 */
function wireAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1 || at === address.length - 1 || /[\s<>\\"]/u.test(address) || /[\p{Cc}]/u.test(address)) {
    throw new SmtpProbeError(`${JSON.stringify(address)} is not an e-mail address.`);
  }
  const ace = domainToASCII(address.slice(at + 1));
  if (!ace) throw new SmtpProbeError(`${JSON.stringify(address)} has no valid domain.`);
  return `${address.slice(0, at)}@${ace}`;
}

const isAscii = (s: string) => /^[\x20-\x7e]*$/.test(s);

/**
 * `await acceptsRecipient('127.0.0.1:25', 'a@example.com')` → true (250 to RCPT) or false (5xx).
 * A local part that is not ASCII is offered with SMTPUTF8 (RFC 6531) when the server advertises
 * it; a server that does not cannot take mail for it, so the answer is false without asking.
 */
export async function acceptsRecipient(smtp: string, address: string, opts: SmtpProbeOptions = {}): Promise<boolean> {
  const { host, port } = splitHostPort(smtp);
  const rcpt = wireAddress(address);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const session = await SmtpSession.open(host, port, timeoutMs, smtp);
  try {
    const greeting = await session.reply();
    if (greeting.code !== 220) throw session.unexpected('the greeting', greeting);
    const helo = opts.heloName ?? os.hostname();
    let ehlo = await session.command(`EHLO ${helo}`);
    let extensions: string[] = [];
    if (ehlo.code === 250) {
      extensions = ehlo.lines.slice(1).map((l) => l.split(' ')[0].toUpperCase());
    } else if (ehlo.code >= 500) {
      // RFC 5321 4.1.4: a server without ESMTP; HELO still probes (without SMTPUTF8).
      ehlo = await session.command(`HELO ${helo}`);
      if (ehlo.code !== 250) throw session.unexpected('HELO', ehlo);
    } else {
      throw session.unexpected('EHLO', ehlo);
    }
    let mailFrom = 'MAIL FROM:<>';
    if (!isAscii(rcpt)) {
      if (!extensions.includes('SMTPUTF8')) return false;
      mailFrom += ' SMTPUTF8';
    }
    const mail = await session.command(mailFrom);
    if (mail.code < 200 || mail.code > 299) throw session.unexpected('MAIL FROM:<>', mail);
    const answer = await session.command(`RCPT TO:<${rcpt}>`);
    await session.command('RSET').catch(() => undefined);
    await session.command('QUIT').catch(() => undefined);
    if (answer.code >= 200 && answer.code <= 299) return true;
    if (answer.code >= 500 && answer.code <= 599) return false;
    throw session.unexpected(`RCPT TO:<${rcpt}>`, answer);
  } finally {
    session.close();
  }
}

/** One connection: replies read line by line, multi-line replies ("250-…" … "250 …") joined. */
class SmtpSession {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private failure: Error | null = null;

  private constructor(
    private readonly socket: net.Socket,
    private readonly where: string,
    private readonly timeoutMs: number,
  ) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      if (this.buf.length > MAX_REPLY_BYTES) this.fail(new SmtpProbeError(`the SMTP server at ${where} sent an over-long reply`));
      this.wake();
    });
    socket.on('error', (e) => this.fail(new SmtpProbeError(`the SMTP server at ${where} failed: ${e.message}`)));
    socket.on('close', () => this.fail(new SmtpProbeError(`the SMTP server at ${where} closed the connection`)));
    socket.setTimeout(timeoutMs, () => {
      this.fail(new SmtpProbeError(`the SMTP server at ${where} said nothing for ${timeoutMs / 1000} s`));
      socket.destroy();
    });
  }

  static open(host: string, port: number, timeoutMs: number, where: string): Promise<SmtpSession> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new SmtpProbeError(`could not connect to the SMTP server at ${where} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new SmtpSession(socket, where, timeoutMs));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(new SmtpProbeError(`could not connect to the SMTP server at ${where}: ${e.message}`));
      });
    });
  }

  private fail(e: Error) {
    this.failure ??= e;
    this.wake();
  }

  private wake() {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /** One reply, possibly of several lines; a line is ended by CRLF (a bare LF is taken too). */
  async reply(): Promise<Reply> {
    const lines: string[] = [];
    let code = 0;
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) {
        if (this.failure) throw this.failure;
        await new Promise<void>((resolve) => (this.waiting = resolve));
        continue;
      }
      const line = this.buf.subarray(0, nl).toString('utf8').replace(/\r$/, '');
      this.buf = this.buf.subarray(nl + 1);
      const m = /^([2-5][0-9][0-9])([ -]|$)(.*)$/.exec(line);
      if (!m) throw new SmtpProbeError(`the SMTP server at ${this.where} sent a line that is not a reply: ${JSON.stringify(line.slice(0, 200))}`);
      if (code && Number(m[1]) !== code) throw new SmtpProbeError(`the SMTP server at ${this.where} changed the code within one reply`);
      code = Number(m[1]);
      lines.push(m[3]);
      if (m[2] !== '-') return { code, lines };
    }
  }

  async command(line: string): Promise<Reply> {
    if (this.failure) throw this.failure;
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  unexpected(step: string, r: Reply): SmtpProbeError {
    return new SmtpProbeError(`the SMTP server at ${this.where} answered ${step} with ${r.code} ${r.lines.join(' ').slice(0, 300)}`.trimEnd());
  }

  close() {
    this.socket.destroy();
  }
}
