// The sending limits as the mail server reads them (docs/decisions/0020-outbound-limits.md): from
// the mail directory's `mail_users`, with the mail server's own read-only access to the store — the
// role that may read the mail directory alone on PostgreSQL, the file opened read-only on SQLite —
// never with hostplane's DATABASE_URL.
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MailStore } from '../node/render/facts.js';

type MailDirectory = Pick<Database, 'mail_users'>;

/** How long one read may take: Postfix waits for the answer while its client waits for the RCPT reply. */
const QUERY_TIMEOUT_MS = 5_000;

export class MailLimitsRepository {
  private constructor(
    private readonly db: Kysely<MailDirectory>,
    /** The mail server whose rows these are (`server` of each row). */
    private readonly server: string,
  ) {}

  /** `MailLimitsRepository.open(store, 'mx1')`: connects lazily; close() when done. */
  static open(store: MailStore, server: string): MailLimitsRepository {
    if (store.driver === 'sqlite') {
      const database = new SQLite(store.path, { readonly: true, fileMustExist: true });
      database.pragma('busy_timeout = 5000');
      return new MailLimitsRepository(new Kysely<MailDirectory>({ dialect: new SqliteDialect({ database }) }), server);
    }
    const pool = new pg.Pool({
      host: store.host,
      port: store.port,
      database: store.dbname,
      user: store.user,
      password: store.password,
      max: 2,
      connectionTimeoutMillis: QUERY_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      // verify-full, as Dovecot and Postfix connect: the server's name checked against these roots.
      ssl: store.sslRootCert ? { ca: fs.readFileSync(store.sslRootCert, 'utf8'), servername: store.host } : undefined,
    });
    // An idle connection that loses its server must not end the process; the next read reconnects.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }).withSchema(store.schema) as unknown as Kysely<MailDirectory>;
    return new MailLimitsRepository(db, server);
  }

  /** The recipients per hour of active mailbox `address` of this server, or null when it has none. */
  async recipientsPerHour(address: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('mail_users')
      .select('recipients_per_hour')
      .where('address', '=', address)
      .where('active', '=', 1)
      .where('server', '=', this.server)
      .executeTakeFirst();
    return row === undefined ? null : Number(row.recipients_per_hour);
  }

  close(): Promise<void> {
    return this.db.destroy();
  }
}
