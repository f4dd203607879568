// A tiny IMAP4rev1 client over a plain socket for the mail tests
// (docs/decisions/0009-mail-directory.md; RFC 3501): LOGIN, EXAMINE/SELECT (the EXISTS count),
// FETCH of a message's text, LOGOUT — what a mail client does first, with every tagged status
// visible to the test. No npm client library on purpose.
import net from 'node:net';

export interface ImapResponse {
  /** The tagged status: OK, NO or BAD. */
  status: string;
  /** The rest of the tagged line. */
  text: string;
  /** The untagged responses (`* …`), each with its literals inlined. */
  untagged: string[];
}

/** "host:port" → [host, port]. */
function hostPort(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  return [addr.slice(0, i), Number(addr.slice(i + 1))];
}

/** An IMAP quoted string. */
function quote(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export class ImapClient {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended: Error | null = null;
  private tag = 0;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('error', (e) => {
      this.ended = e;
      this.wake();
    });
    socket.on('close', () => {
      this.ended ??= new Error('IMAP connection closed');
      this.wake();
    });
  }

  private wake() {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /** Connects to "host:port" and reads the greeting (which must be `* OK`). */
  static async connect(addr: string): Promise<ImapClient> {
    const [host, port] = hostPort(addr);
    const socket = net.connect(port, host);
    socket.setTimeout(15_000, () => socket.destroy(new Error('IMAP server silent for 15 s')));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new ImapClient(socket);
    const greeting = await client.readResponseLine();
    if (!greeting.startsWith('* OK')) throw new Error(`IMAP greeting: ${greeting}`);
    return client;
  }

  /** Waits for more bytes (or the end of the connection, which throws). */
  private async more(): Promise<void> {
    if (this.ended) throw this.ended;
    await new Promise<void>((resolve) => (this.waiting = resolve));
  }

  /** One response line with its literals ({n}\r\n + n bytes) inlined. */
  private async readResponseLine(): Promise<string> {
    let line = '';
    for (;;) {
      const crlf = this.buf.indexOf('\r\n');
      if (crlf < 0) {
        await this.more();
        continue;
      }
      const part = this.buf.subarray(0, crlf).toString('utf8');
      const literal = /\{(\d+)\}$/.exec(part);
      if (!literal) {
        this.buf = this.buf.subarray(crlf + 2);
        return line + part;
      }
      const n = Number(literal[1]);
      while (this.buf.length < crlf + 2 + n) await this.more();
      line += part + '\r\n' + this.buf.subarray(crlf + 2, crlf + 2 + n).toString('utf8');
      this.buf = this.buf.subarray(crlf + 2 + n);
    }
  }

  /** Sends `command` tagged and reads up to its tagged response. */
  async command(command: string): Promise<ImapResponse> {
    const tag = `a${++this.tag}`;
    this.socket.write(`${tag} ${command}\r\n`);
    const untagged: string[] = [];
    for (;;) {
      const line = await this.readResponseLine();
      if (line.startsWith(`${tag} `)) {
        const [, status, text = ''] = /^\S+ (\S+) ?(.*)$/s.exec(line)!;
        return { status, text, untagged };
      }
      if (line.startsWith('* ')) untagged.push(line.slice(2));
    }
  }

  login(user: string, password: string): Promise<ImapResponse> {
    return this.command(`LOGIN ${quote(user)} ${quote(password)}`);
  }

  /** EXAMINE (read-only) or SELECT of `mailbox`: the tagged status and the EXISTS count. */
  async open(mailbox = 'INBOX', how: 'EXAMINE' | 'SELECT' = 'EXAMINE'): Promise<{ status: string; exists: number | null }> {
    const r = await this.command(`${how} ${quote(mailbox)}`);
    const exists = r.untagged.map((u) => /^(\d+) EXISTS$/.exec(u)).find((m) => m !== null);
    return { status: r.status, exists: exists ? Number(exists[1]) : null };
  }

  /** The whole message `seq` of the open mailbox (BODY.PEEK[]: it stays unread), or null. */
  async fetchMessage(seq: number): Promise<string | null> {
    const r = await this.command(`FETCH ${seq} BODY.PEEK[]`);
    if (r.status !== 'OK') return null;
    const hit = r.untagged.find((u) => u.startsWith(`${seq} FETCH `));
    const m = hit ? /BODY\[\] \{\d+\}\r\n([\s\S]*)\)$/.exec(hit) : null;
    return m ? m[1] : null;
  }

  /** LOGOUT, then the socket is closed. */
  async logout(): Promise<void> {
    if (!this.ended) await this.command('LOGOUT').catch(() => undefined);
    this.socket.destroy();
  }

  close(): void {
    this.socket.destroy();
  }
}

/** One LOGIN on a new connection: the tagged status (OK, NO, BAD). */
export async function imapLogin(addr: string, user: string, password: string): Promise<string> {
  const c = await ImapClient.connect(addr);
  try {
    return (await c.login(user, password)).status;
  } finally {
    await c.logout();
  }
}

/** LOGIN + EXAMINE INBOX: its EXISTS count; throws when the login or EXAMINE fails. */
export async function inboxCount(addr: string, user: string, password: string): Promise<number> {
  const c = await ImapClient.connect(addr);
  try {
    const login = await c.login(user, password);
    if (login.status !== 'OK') throw new Error(`IMAP LOGIN ${user}: ${login.status} ${login.text}`);
    const { status, exists } = await c.open('INBOX');
    if (status !== 'OK' || exists === null) throw new Error(`IMAP EXAMINE INBOX of ${user}: ${status}`);
    return exists;
  } finally {
    await c.logout();
  }
}

/** LOGIN + EXAMINE `mailbox` + FETCH of every message: their texts, oldest first (none when the mailbox does not exist). */
export async function inboxMessages(addr: string, user: string, password: string, mailbox = 'INBOX'): Promise<string[]> {
  const c = await ImapClient.connect(addr);
  try {
    const login = await c.login(user, password);
    if (login.status !== 'OK') throw new Error(`IMAP LOGIN ${user}: ${login.status} ${login.text}`);
    const { exists } = await c.open(mailbox);
    const out: string[] = [];
    for (let i = 1; i <= (exists ?? 0); i++) out.push((await c.fetchMessage(i)) ?? '');
    return out;
  } finally {
    await c.logout();
  }
}
