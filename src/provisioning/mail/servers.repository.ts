// All SQL of the registry of mail servers (operator data), and the conversion of a
// row to what the mail driver needs. Rows carry the doveadm API key: callers that print or answer
// anything map them to a view without it first (admin/mail-servers.service.ts mailServerView).
import crypto from 'node:crypto';
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailServerConn } from './driver.js';

export type MailServerRow = Selectable<Database['mail_servers']>;
export type NewMailServerRow = Insertable<Database['mail_servers']>;

/** A registered mail server as the driver needs it: `drivers.mail.authenticates(mailServerConn(row), address)`. */
export const mailServerConn = (row: Pick<MailServerRow, 'name' | 'doveadm_url' | 'doveadm_key' | 'smtp'>): MailServerConn => ({
  name: row.name,
  doveadmUrl: row.doveadm_url,
  doveadmKey: row.doveadm_key,
  smtp: row.smtp,
});

/**
 * The key a mail server names itself with in its login reports (POST /internal/mail-auth-report):
 * derived from its doveadm key, so that the report header, sent with every login, does not carry a
 * key to the doveadm API. deploy/local/up.sh computes the same: sha256("hostplane-mail-auth-report:" + key).
 */
export const mailReportKey = (doveadmKey: string) => crypto.createHash('sha256').update(`hostplane-mail-auth-report:${doveadmKey}`).digest('hex');

export class MailServersRepository {
  constructor(readonly db: Kysely<Database>) {}

  async add(v: NewMailServerRow): Promise<MailServerRow> {
    return this.db.insertInto('mail_servers').values(v).returningAll().executeTakeFirstOrThrow();
  }

  list(): Promise<MailServerRow[]> {
    return this.db.selectFrom('mail_servers').selectAll().orderBy('name').execute();
  }

  byName(name: string): Promise<MailServerRow | undefined> {
    return this.db.selectFrom('mail_servers').selectAll().where('name', '=', name).executeTakeFirst();
  }

  defaultServer(): Promise<MailServerRow | undefined> {
    return this.db.selectFrom('mail_servers').selectAll().where('is_default', '=', 1).executeTakeFirst();
  }

  /** Makes `name` the default (the old one cleared first: the partial unique index allows one). In the caller's transaction. */
  async setDefault(name: string): Promise<void> {
    await this.db.updateTable('mail_servers').set({ is_default: 0 }).where('is_default', '=', 1).where('name', '!=', name).execute();
    await this.db.updateTable('mail_servers').set({ is_default: 1 }).where('name', '=', name).execute();
  }

  /** Where server `name`'s doveadm is and its key; the row as it is then, or undefined when there is no such server. */
  setDoveadm(name: string, v: Pick<MailServerRow, 'doveadm_url' | 'doveadm_key'>): Promise<MailServerRow | undefined> {
    return this.db.updateTable('mail_servers').set(v).where('name', '=', name).returningAll().executeTakeFirst();
  }

  /**
   * The mail server of a presence domain: its package's, or the default where the package has none
   * yet (its first address goes there). undefined: not a presence domain, or no mail server at all.
   */
  async ofPresenceDomain(domain: string): Promise<MailServerRow | undefined> {
    const pkg = await this.db
      .selectFrom('domains')
      .innerJoin('packages', 'packages.id', 'domains.package_id')
      .select('packages.mail_server_name')
      .where('domains.name', '=', domain)
      .where('domains.has_presence', '=', 1)
      .executeTakeFirst();
    if (!pkg) return undefined;
    return pkg.mail_server_name === null ? this.defaultServer() : this.byName(pkg.mail_server_name);
  }

  /** The ids of the packages placed on server `name` (their mailboxes are there), in id order. */
  async packagesOn(name: string): Promise<number[]> {
    const rows = await this.db.selectFrom('packages').select('id').where('mail_server_name', '=', name).orderBy('id').execute();
    return rows.map((r) => r.id);
  }

  async remove(name: string): Promise<void> {
    await this.db.deleteFrom('mail_servers').where('name', '=', name).execute();
  }
}
