// The mail policy service in tests (docs/decisions/0020-outbound-limits.md): a client speaking
// Postfix's policy protocol over TCP with the attributes smtpd sends, and the store as a mail
// server reads it — on PostgreSQL a read-only role that may read the mail directory alone (as
// up.sh and node setup make one), on SQLite the file.
import crypto from 'node:crypto';
import net from 'node:net';
import { sql } from 'kysely';
import type { MailStore } from '../../src/node/render/index.js';
import { MAIL_DIRECTORY_TABLES } from '../../src/node/roles/mail.js';
import type { TestStore } from './app.js';

/** The store `ts` as a mail server reads it; `drop()` removes the role made for it. */
export async function mailServerStore(ts: TestStore): Promise<{ store: MailStore; drop(): Promise<void> }> {
  if (!ts.schema) return { store: { driver: 'sqlite', path: ts.url }, drop: async () => {} };
  const u = new URL(ts.url);
  const role = `hp_mail_${ts.schema}`;
  const password = crypto.randomBytes(12).toString('hex');
  const db = ts.store.db;
  await sql`create role ${sql.id(role)} login password ${sql.lit(password)}`.execute(db);
  await sql`alter role ${sql.id(role)} set default_transaction_read_only = on`.execute(db);
  await sql`grant usage on schema ${sql.id(ts.schema)} to ${sql.id(role)}`.execute(db);
  for (const table of MAIL_DIRECTORY_TABLES) await sql`grant select on ${sql.table(`${ts.schema}.${table}`)} to ${sql.id(role)}`.execute(db);
  return {
    store: { driver: 'pgsql', host: u.hostname, port: Number(u.port || 5432), dbname: u.pathname.slice(1), user: role, password, schema: ts.schema },
    drop: async () => {
      await sql`drop owned by ${sql.id(role)}`.execute(db).catch(() => undefined);
      await sql`drop role if exists ${sql.id(role)}`.execute(db).catch(() => undefined);
    },
  };
}

/** One smtpd process's connection to the policy service: `await c.ask(rcpt('a@b', 'x@y', 'i1'))` → "DUNNO". */
export class PolicyClient {
  private buf = '';
  private waiting: (() => void) | null = null;
  private closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static async connect(port: number): Promise<PolicyClient> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new PolicyClient(socket);
  }

  /** Sends one request; the action of the answer (what follows `action=`). */
  async ask(attrs: Record<string, string>): Promise<string> {
    this.socket.write(`${Object.entries(attrs).map(([k, v]) => `${k}=${v}\n`).join('')}\n`);
    for (;;) {
      const end = this.buf.indexOf('\n\n');
      if (end >= 0) {
        const answer = this.buf.slice(0, end);
        this.buf = this.buf.slice(end + 2);
        if (!answer.startsWith('action=') || answer.includes('\n')) throw new Error(`not a policy answer: ${JSON.stringify(answer)}`);
        return answer.slice('action='.length);
      }
      if (this.closed) throw new Error('the policy service closed the connection');
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** What smtpd sends at RCPT TO of a submission service; `user` null: no login (port 25). */
export function rcpt(user: string | null, recipient: string, instance: string): Record<string, string> {
  return {
    request: 'smtpd_access_policy', protocol_state: 'RCPT', protocol_name: 'ESMTP', client_address: '192.0.2.7', client_name: 'client.example',
    reverse_client_name: 'client.example', helo_name: 'laptop', sender: user ?? 'someone@outside.example', recipient, recipient_count: '0',
    queue_id: '', instance, size: '0', etrn_domain: '', stress: '', sasl_method: user ? 'PLAIN' : '', sasl_username: user ?? '', sasl_sender: '',
    ccert_subject: '', ccert_issuer: '', ccert_fingerprint: '', encryption_protocol: 'TLSv1.3', encryption_cipher: 'TLS_AES_256_GCM_SHA384',
    encryption_keysize: '256', policy_context: '', server_address: '127.0.0.1', server_port: '587', compatibility_level: '3.6', mail_version: '3.7.11',
  };
}

/** What smtpd sends after the message's final dot: `recipients` were accepted. */
export function endOfMessage(user: string | null, recipients: number, instance: string): Record<string, string> {
  return { ...rcpt(user, '', instance), protocol_state: 'END-OF-MESSAGE', recipient_count: String(recipients), queue_id: 'ABC123', size: '512' };
}

/** A message of `recipients` from `user` over `c`, each RCPT asked then END-OF-MESSAGE: the RCPT answers. */
export async function message(c: PolicyClient, user: string | null, recipients: string[], instance = crypto.randomBytes(4).toString('hex')): Promise<string[]> {
  const answers: string[] = [];
  for (const to of recipients) answers.push(await c.ask(rcpt(user, to, instance)));
  await c.ask(endOfMessage(user, answers.filter((a) => a === 'DUNNO').length, instance));
  return answers;
}

/** `n` distinct recipients at outside.example. */
export const recipients = (n: number, tag = 'r') => Array.from({ length: n }, (_, i) => `${tag}${i}@outside.example`);
