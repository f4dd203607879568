// All SQL of e-mail addresses (API guide "E-mail addresses"): scoped reads for the API (an address
// is visible when its customer is in the caller's scope, src/db/scope.ts), where an address may
// live (a presence domain or a subdomain of one), and the writes of the service and the jobs. The
// mail directory the mail servers read has its own repository (mail-directory.repository.ts).
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, EmailAddressesTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { withinTokenDomains } from '../../auth/token-scope.js';
import { lockedPackageRows } from '../../db/locks.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import { parentDomains } from '../../domain-name.js';

export type EmailAddressRow = Selectable<EmailAddressesTable>;
export type NewEmailAddress = Omit<Insertable<EmailAddressesTable>, 'state' | 'created_at' | 'updated_at' | 'autoresponder_text' | 'autoresponder_active'>;

/** An address of a mail server's rspamd settings map (EmailAddressesRepository.antispamModesOn). */
export interface AntispamModeRow {
  address: string;
  kind: EmailAddressRow['kind'];
  antispam: Exclude<EmailAddressRow['antispam'], 'reject'>;
}

export interface EmailAddressFilters {
  packageIds?: number[];
  /** Stored form (local part lower-cased, domain ACE). */
  addresses?: string[];
  domains?: string[];
}

/** The package an address lives in, with what creating one needs. */
export interface MailPackage {
  id: number;
  customer_id: number;
  mail_server_name: string | null;
  max_email_addresses: number;
  mailbox_quota_mb: number;
}

/** Where the domain part of a new address is: a presence domain of the scope, or a subdomain of one. */
export type MailDomainTarget =
  | { kind: 'presence'; zone: string; packageId: number | null }
  | { kind: 'registration-only'; name: string }
  | { kind: 'subdomain'; zone: string; packageId: number }
  | { kind: 'none' };

export class EmailAddressesRepository {
  /** Pass a transaction for writes that belong together (address + mail directory + job). */
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db
      .selectFrom('email_addresses')
      .selectAll('email_addresses')
      .where(visibleTo(actor, 'email_addresses.customer_id'))
      .$call(withinTokenDomains(actor, 'email_addresses.zone'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('email_addresses.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: EmailAddressFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.packageIds) q = q.where('email_addresses.package_id', 'in', f.packageIds);
    if (f.addresses) q = q.where('email_addresses.address', 'in', f.addresses);
    if (f.domains) q = q.where('email_addresses.domain', 'in', f.domains);
    return fetchPage(q.orderBy('email_addresses.id'), page);
  }

  byId(id: number) {
    return this.db.selectFrom('email_addresses').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Serialises writers of one address until the transaction ends: a no-op update takes the row's
   * lock on PostgreSQL and the write lock on SQLite (read the row after it).
   */
  async lock(id: number): Promise<void> {
    await this.db
      .updateTable('email_addresses')
      .set((eb) => ({ state: eb.ref('state') }))
      .where('id', '=', id)
      .execute();
  }

  /**
   * What `domain` (ACE) is for the caller: a domain of its scope (with or without presence), or an
   * existing subdomain (not being deleted) of a presence domain of its scope — two queries at most.
   */
  async domainTarget(actor: Actor, domain: string): Promise<MailDomainTarget> {
    const own = await this.db
      .selectFrom('domains')
      .select(['name', 'package_id', 'has_presence'])
      .where('name', '=', domain)
      .where(visibleTo(actor, 'domains.customer_id'))
      .$call(withinTokenDomains(actor, 'domains.name'))
      .executeTakeFirst();
    if (own) return own.has_presence ? { kind: 'presence', zone: own.name, packageId: own.package_id } : { kind: 'registration-only', name: own.name };
    // Another customer's domain of that name: not a subdomain of the caller's (404, not theirs).
    if (await this.db.selectFrom('domains').select('name').where('name', '=', domain).executeTakeFirst()) return { kind: 'none' };
    const splits = parentDomains(domain).map((parent) => ({ parent, name: domain.slice(0, domain.length - parent.length - 1) }));
    if (!splits.length) return { kind: 'none' };
    const subs = await this.db
      .selectFrom('subdomains')
      .select(['package_id', 'domain', 'name'])
      .where((eb) => eb.or(splits.map((s) => eb.and([eb('subdomains.domain', '=', s.parent), eb('subdomains.name', '=', s.name)]))))
      .where('subdomains.state', '!=', 'deleting')
      .where(visibleTo(actor, 'subdomains.customer_id'))
      .$call(withinTokenDomains(actor, 'subdomains.domain'))
      .executeTakeFirst();
    return subs ? { kind: 'subdomain', zone: subs.domain, packageId: subs.package_id } : { kind: 'none' };
  }

  /**
   * The package an address goes into, read under the package lock (src/db/locks.ts; one statement
   * on PostgreSQL): the `max_email_addresses` count after it is sound.
   */
  async lockPackage(packageId: number): Promise<MailPackage | undefined> {
    const [pkg] = await lockedPackageRows(
      this.db,
      packageId,
      this.db
        .selectFrom('packages')
        .innerJoin('plans', 'plans.id', 'packages.plan_id')
        .select(['packages.id', 'packages.customer_id', 'packages.mail_server_name', 'plans.max_email_addresses', 'plans.mailbox_quota_mb']),
    );
    return pkg;
  }

  /**
   * The sending limit of the package's plan, read after lockPackage in a statement of its own: a
   * plan change that committed while this transaction waited for the lock is seen (on PostgreSQL
   * the locking statement keeps the snapshot it began with).
   */
  async recipientsPerHour(packageId: number): Promise<number> {
    const row = await this.db
      .selectFrom('packages')
      .innerJoin('plans', 'plans.id', 'packages.plan_id')
      .select('plans.recipients_per_hour')
      .where('packages.id', '=', packageId)
      .executeTakeFirstOrThrow();
    return row.recipients_per_hour;
  }


  /**
   * Places a package on a mail server (its first address; docs/decisions/0009-mail-directory.md
   * "Mail servers are operator data; jobs wait for them").
   */
  async placePackage(packageId: number, mailServer: string): Promise<void> {
    await this.db.updateTable('packages').set({ mail_server_name: mailServer }).where('id', '=', packageId).where('mail_server_name', 'is', null).execute();
  }

  async exists(address: string): Promise<boolean> {
    return (await this.db.selectFrom('email_addresses').select('id').where('address', '=', address).executeTakeFirst()) !== undefined;
  }

  async countInPackage(packageId: number): Promise<number> {
    const r = await this.db.selectFrom('email_addresses').select((eb) => eb.fn.countAll<number>().as('n')).where('package_id', '=', packageId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Portal-password hashes of the contacts whose e-mail is one of `emails` (any case): the
   * customer-portal rule (API guide "Password rules").
   */
  async portalPasswordHashes(emails: string[]): Promise<string[]> {
    const rows = await this.db
      .selectFrom('contacts')
      .select('portal_password_hash')
      .where((eb) => eb(eb.fn('lower', ['email']), 'in', emails.map((e) => e.toLowerCase())))
      .where('portal_password_hash', 'is not', null)
      .execute();
    return rows.map((r) => r.portal_password_hash!);
  }

  insert(v: NewEmailAddress): Promise<EmailAddressRow> {
    const now = nowIso();
    return this.db
      .insertInto('email_addresses')
      .values({ autoresponder_text: '', autoresponder_active: 0, ...v, state: 'pending', created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  update(id: number, v: Updateable<EmailAddressesTable>): Promise<EmailAddressRow> {
    return this.db.updateTable('email_addresses').set({ ...v, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /** The quota of every mailbox of a package, as its (new) plan sets it. */
  async setPackageQuota(packageId: number, quotaBytes: number): Promise<void> {
    await this.db.updateTable('email_addresses').set({ quota_bytes: quotaBytes }).where('package_id', '=', packageId).where('kind', '=', 'mailbox').execute();
  }

  /**
   * The autoresponders whose `date` (`activates` or `expires`) is `today` or before: switched on
   * (activates) or off (expires), the date cleared. Answers the rows as changed.
   */
  async reachAutoresponderDate(date: 'activates' | 'expires', today: string): Promise<EmailAddressRow[]> {
    const column = date === 'activates' ? 'autoresponder_activates' : 'autoresponder_expires';
    return this.db
      .updateTable('email_addresses')
      .set({ autoresponder_active: date === 'activates' ? 1 : 0, [column]: null, updated_at: nowIso() })
      .where(column, 'is not', null)
      .where(column, '<=', today)
      .returningAll()
      .execute();
  }

  /** Moves an address from one state to another; false when it was not in `from` (or is gone). */
  async transition(id: number, from: EmailAddressRow['state'], to: EmailAddressRow['state']) {
    const r = await this.db.updateTable('email_addresses').set({ state: to }).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The live mailboxes of `server` (stored addresses), for the quota refresh. */
  async liveMailboxesOn(server: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('email_addresses')
      .select('address')
      .where('mail_server_name', '=', server)
      .where('kind', '=', 'mailbox')
      .where('state', '=', 'live')
      .execute();
    return rows.map((r) => r.address);
  }

  /**
   * The addresses of `server` (stored form) in an antispam mode other than the default `reject`,
   * with their mode, in address order: rspamd's settings map (email-addresses.rspamd-settings.ts),
   * which every mail server polls every few seconds. One statement; addresses being deleted are
   * refused by SMTP already and left out. No index covers it yet (mail_server_name is unindexed):
   * a partial index on (mail_server_name, address) WHERE antispam <> 'reject' would.
   */
  async antispamModesOn(server: string): Promise<AntispamModeRow[]> {
    const rows = await this.db
      .selectFrom('email_addresses')
      .select(['address', 'kind', 'antispam'])
      .where('mail_server_name', '=', server)
      .where('antispam', '!=', 'reject')
      .where('state', '!=', 'deleting')
      .orderBy('address')
      .execute();
    return rows as AntispamModeRow[];
  }

  /** Stores measured usage (bytes by address) of mailboxes on `server`, measured at `at`. */
  async setUsage(server: string, usage: Map<string, number>, at: string): Promise<void> {
    for (const [address, bytes] of usage) {
      await this.db
        .updateTable('email_addresses')
        .set({ used_bytes: bytes, usage_updated_at: at })
        .where('mail_server_name', '=', server)
        .where('address', '=', address)
        .execute();
    }
  }

  async delete(id: number) {
    await this.db.deleteFrom('email_addresses').where('id', '=', id).execute();
  }
}
