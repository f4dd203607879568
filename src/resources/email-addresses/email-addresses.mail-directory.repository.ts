// The mail directory (src/node/render; docs/decisions/0009-mail-directory.md): the
// tables Dovecot and Postfix read at every login and delivery. Written only here, always in the
// transaction of the API change it follows, so a new password, a revoked application password or
// a changed forward is live at commit: nothing is pushed to the mail servers or reloaded.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { nowIso } from '../../db/time.js';
import { fetchPage, type Page, type PageResult } from '../../db/paging.js';

/** An application password as the API lists it (never its secret). */
export interface AppPasswordRow {
  id: number;
  device: string;
  application: string;
  created_at: string;
  last_used_at: string | null;
}

const APP_COLUMNS = ['id', 'device', 'application', 'created_at', 'last_used_at'] as const;

export class MailDirectoryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Postfix handles mail for `domain` itself (virtual_mailbox_domains) from now on. A domain stays
   * when its last address goes: mail to it is then refused as "unknown user", never relayed.
   */
  async addDomain(domain: string, server: string): Promise<void> {
    await this.db.insertInto('mail_domains').values({ domain, server }).onConflict((oc) => oc.column('domain').doNothing()).execute();
  }

  /** A mailbox: its {BLF-CRYPT} hash, its quota and sending limit, able to log in and receive mail. */
  async addUser(u: { address: string; domain: string; passwordHash: string; quotaBytes: number; recipientsPerHour: number; server: string }): Promise<void> {
    await this.db
      .insertInto('mail_users')
      .values({
        address: u.address, domain: u.domain, password_hash: u.passwordHash, quota_bytes: u.quotaBytes, recipients_per_hour: u.recipientsPerHour, active: 1, server: u.server,
      })
      .execute();
  }

  async setPasswordHash(address: string, passwordHash: string): Promise<void> {
    await this.db.updateTable('mail_users').set({ password_hash: passwordHash }).where('address', '=', address).execute();
  }

  /**
   * The quota and sending limit of every mailbox of a package (its plan changed): Dovecot reads the
   * quota at the next login or delivery, the policy service the limit at the next message.
   */
  async setPackageLimits(packageId: number, l: { quotaBytes: number; recipientsPerHour: number }): Promise<void> {
    await this.db
      .updateTable('mail_users')
      .set({ quota_bytes: l.quotaBytes, recipients_per_hour: l.recipientsPerHour })
      .where('address', 'in', (eb) => eb.selectFrom('email_addresses').select('address').where('package_id', '=', packageId).where('kind', '=', 'mailbox'))
      .execute();
  }

  /** The sending limit of every mailbox of every package on plan `planId` (the plan's setting changed); how many rows. */
  async setPlanRecipientsPerHour(planId: number, recipientsPerHour: number): Promise<number> {
    const r = await this.db
      .updateTable('mail_users')
      .set({ recipients_per_hour: recipientsPerHour })
      .where('address', 'in', (eb) =>
        eb
          .selectFrom('email_addresses')
          .innerJoin('packages', 'packages.id', 'email_addresses.package_id')
          .select('email_addresses.address')
          .where('packages.plan_id', '=', planId)
          .where('email_addresses.kind', '=', 'mailbox'),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Logins and deliveries stop at once (Dovecot's passdb and Postfix's maps want active = 1); the mail stays for the delete job. */
  async deactivateUser(address: string): Promise<void> {
    await this.db.updateTable('mail_users').set({ active: 0 }).where('address', '=', address).execute();
  }

  /** Whether `address` has a mailbox entry (active or not). */
  async hasUser(address: string): Promise<boolean> {
    return (await this.db.selectFrom('mail_users').select('address').where('address', '=', address).executeTakeFirst()) !== undefined;
  }

  /** The mailbox, its application passwords and its Sieve script leave the directory. */
  async removeUser(address: string): Promise<void> {
    await this.db.deleteFrom('mail_app_passwords').where('address', '=', address).execute();
    await this.db.deleteFrom('mail_sieve').where('address', '=', address).execute();
    await this.db.deleteFrom('mail_users').where('address', '=', address).execute();
  }

  /**
   * Makes `script` the mailbox's active Sieve script (null: none). Its id is the text's SHA-256:
   * Dovecot recompiles at the next delivery exactly when the text changed (migration 009).
   */
  async setSieve(address: string, server: string, script: string | null): Promise<void> {
    const id = script === null ? null : crypto.createHash('sha256').update(script, 'utf8').digest('hex');
    const current = await this.db.selectFrom('mail_sieve').select('id').where('address', '=', address).where('name', '=', 'active').executeTakeFirst();
    if (current?.id === id) return;
    await this.db.deleteFrom('mail_sieve').where('address', '=', address).execute();
    if (script !== null) await this.db.insertInto('mail_sieve').values({ address, name: 'active', id: id!, script, server }).execute();
  }

  /**
   * Mailboxes without a Sieve script (created before migration 009, when the scripts came in): at
   * most `limit`, oldest first. Forwards have none.
   */
  mailboxesWithoutSieve(limit: number) {
    return this.db
      .selectFrom('email_addresses as e')
      .selectAll('e')
      .where('e.kind', '=', 'mailbox')
      .where('e.state', '!=', 'deleting')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('mail_sieve as s').select('s.address').whereRef('s.address', '=', 'e.address'))))
      .orderBy('e.id')
      .limit(limit)
      .execute();
  }

  /**
   * Makes `source`'s alias rows exactly `destinations` (Postfix virtual_alias_maps): a forward has
   * its targets; a mailbox with forward_to has itself too, so it keeps a copy; none removes them.
   */
  async setAliases(source: string, destinations: string[], server: string): Promise<void> {
    await this.db.deleteFrom('mail_aliases').where('source', '=', source).execute();
    if (destinations.length) await this.db.insertInto('mail_aliases').values(destinations.map((destination) => ({ source, destination, server }))).execute();
  }

  async addAppPassword(a: { address: string; secretSha256: string; device: string; application: string }): Promise<AppPasswordRow> {
    return this.db
      .insertInto('mail_app_passwords')
      .values({ address: a.address, secret_sha256: a.secretSha256, device: a.device, application: a.application, created_at: nowIso() })
      .returning(APP_COLUMNS)
      .executeTakeFirstOrThrow();
  }

  appPasswords(address: string, page: Page | null): Promise<PageResult<AppPasswordRow>> {
    return fetchPage(this.db.selectFrom('mail_app_passwords').select(APP_COLUMNS).where('address', '=', address).orderBy('id'), page);
  }

  /** Sets last_used_at of application password `id` of `address` on mail server `server` to now, unless it was set after `since`. */
  async touchAppPassword(id: number, address: string, server: string, since: string): Promise<void> {
    await this.db
      .updateTable('mail_app_passwords')
      .set({ last_used_at: nowIso() })
      .where('id', '=', id)
      .where('address', '=', address)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
      .where('address', 'in', (eb) => eb.selectFrom('email_addresses').select('address').where('mail_server_name', '=', server))
      .execute();
  }

  /** Deletes one application password of `address`; false when it has none with that id. */
  async removeAppPassword(address: string, id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('mail_app_passwords').where('address', '=', address).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
