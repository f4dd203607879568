// SQL of operator actions (the "customer menu" side, API guide "Authentication"): creating
// customers, contacts, tokens, plans, packages and domains, which the API itself cannot create.
import type { Kysely, Insertable, SelectQueryBuilder } from 'kysely';
import type { Database, DmarcPolicy } from '../db/schema.js';
import { visibleTo, type ScopeOwner } from '../db/scope.js';

/** What `admin token list` shows of a token: never its hash. */
const TOKEN_COLUMNS = [
  'api_tokens.id', 'api_tokens.contact_id', 'contacts.customer_id', 'api_tokens.token_prefix', 'api_tokens.label', 'api_tokens.created_at', 'api_tokens.revoked_at',
  'api_tokens.read_only', 'api_tokens.scope_domains', 'api_tokens.acme_challenge', 'api_tokens.expires_at', 'api_tokens.allow_ips', 'api_tokens.last_used_at',
] as const;

export class AdminRepository {
  constructor(readonly db: Kysely<Database>) {}

  insertCustomer(v: Insertable<Database['customers']>) {
    return this.db.insertInto('customers').values(v).returning('id').executeTakeFirstOrThrow();
  }
  insertContact(v: Insertable<Database['contacts']>) {
    return this.db.insertInto('contacts').values(v).returning('id').executeTakeFirstOrThrow();
  }
  insertToken(v: Insertable<Database['api_tokens']>) {
    return this.db.insertInto('api_tokens').values(v).returning('id').executeTakeFirstOrThrow();
  }
  insertPlan(v: Insertable<Database['plans']>) {
    return this.db.insertInto('plans').values(v).returning('id').executeTakeFirstOrThrow();
  }
  insertPackage(v: Insertable<Database['packages']>) {
    return this.db.insertInto('packages').values(v).returning('id').executeTakeFirstOrThrow();
  }
  insertDomain(v: Insertable<Database['domains']>) {
    return this.db.insertInto('domains').values(v).returning('name').executeTakeFirstOrThrow();
  }
  customer(id: number) {
    return this.db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
  }
  customers() {
    return this.db.selectFrom('customers').selectAll().orderBy('id').execute();
  }
  contacts(customerId?: number) {
    let q = this.db.selectFrom('contacts').selectAll().orderBy('id');
    if (customerId !== undefined) q = q.where('customer_id', '=', customerId);
    return q.execute();
  }
  contact(id: number) {
    return this.db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirst();
  }
  tokens(contactId?: number) {
    let q = this.db
      .selectFrom('api_tokens')
      .innerJoin('contacts', 'contacts.id', 'api_tokens.contact_id')
      .select(TOKEN_COLUMNS)
      .orderBy('api_tokens.id');
    if (contactId !== undefined) q = q.where('api_tokens.contact_id', '=', contactId);
    return q.execute();
  }
  revokeToken(id: number, at: string) {
    return this.db.updateTable('api_tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  }
  /**
   * Tokens go first, in the same transaction: a deleted contact's token never works again (API
   * guide "Authentication").
   */
  async deleteContact(id: number) {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('api_tokens').where('contact_id', '=', id).execute();
      // Its panel sessions, TOTP and recovery codes go by the foreign keys' cascade.
      const r = await trx.deleteFrom('contacts').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }
  plans() {
    return this.db.selectFrom('plans').selectAll().orderBy('id').execute();
  }
  plan(id: number) {
    return this.db.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirst();
  }
  packages() {
    return this.db.selectFrom('packages').selectAll().orderBy('id').execute();
  }
  package(id: number) {
    return this.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirst();
  }
  domains() {
    return this.db.selectFrom('domains').selectAll().orderBy('name').execute();
  }
  /** Sets the portal password and ends the contact's panel sessions in the same transaction (API guide "Panel sessions (extension)"). */
  setPortalPassword(contactId: number, hash: string | null) {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('contacts').set({ portal_password_hash: hash }).where('id', '=', contactId).execute();
      await trx.deleteFrom('panel_sessions').where('contact_id', '=', contactId).execute();
    });
  }
  setLegacyPassword(customerId: number, hash: string | null) {
    return this.db.updateTable('customers').set({ legacy_password_hash: hash }).where('id', '=', customerId).executeTakeFirst();
  }
  /** Customers with their main contact, as `admin customer list` shows them. */
  customersWithMainContact(id?: number) {
    let q = this.db
      .selectFrom('customers')
      .leftJoin('contacts', (j) => j.onRef('contacts.customer_id', '=', 'customers.id').on('contacts.is_main', '=', 1))
      .select([
        'customers.id', 'customers.organization', 'customers.is_reseller', 'customers.reseller_id',
        'customers.is_login_disabled', 'customers.external_customer_id', 'customers.legacy_password_hash', 'customers.created_at',
        'contacts.id as contact_id', 'contacts.name', 'contacts.email', 'contacts.phone',
      ])
      .orderBy('customers.id');
    if (id !== undefined) q = q.where('customers.id', '=', id);
    return q.execute();
  }
  token(id: number) {
    return this.db
      .selectFrom('api_tokens')
      .innerJoin('contacts', 'contacts.id', 'api_tokens.contact_id')
      .select(TOKEN_COLUMNS)
      .where('api_tokens.id', '=', id)
      .executeTakeFirst();
  }
  /** Whether `owner` sees the domain `name` (ACE): a scoped token's domains must be its contact's. */
  async domainVisibleTo(owner: ScopeOwner, name: string) {
    const row = await this.db.selectFrom('domains').select('name').where('name', '=', name).where(visibleTo(owner, 'domains.customer_id')).executeTakeFirst();
    return row !== undefined;
  }
  domain(name: string) {
    return this.db.selectFrom('domains').selectAll().where('name', '=', name).executeTakeFirst();
  }
  async isEmpty() {
    const row = await this.db.selectFrom('customers').select('id').limit(1).executeTakeFirst();
    return row === undefined;
  }

  setPackagePlan(packageId: number, planId: number) {
    return this.db.updateTable('packages').set({ plan_id: planId }).where('id', '=', packageId).execute();
  }

  /**
   * Takes the package lock (src/db/locks.ts) of every package on plan `planId`: a new mailbox
   * in one of them then reads the plan's settings before or after this transaction, never during.
   */
  async lockPackagesOfPlan(planId: number): Promise<void> {
    await this.db.updateTable('packages').set((eb) => ({ name: eb.ref('name') })).where('plan_id', '=', planId).execute();
  }

  setPlanSshKeysPerPackage(planId: number, sshKeysPerPackage: number) {
    return this.db.updateTable('plans').set({ ssh_keys_per_package: sshKeysPerPackage }).where('id', '=', planId).execute();
  }

  setPlanRecipientsPerHour(planId: number, recipientsPerHour: number) {
    return this.db.updateTable('plans').set({ recipients_per_hour: recipientsPerHour }).where('id', '=', planId).execute();
  }

  /**
   * Locks every presence domain of a package (one statement, so before the first recordChange
   * takes the DNS order lock; src/provisioning/dns/propagation.ts) and returns them with their
   * dns_update_lock as read under that lock.
   */
  lockPresenceDomainsOfPackage(packageId: number) {
    return this.lockPresenceDomains([packageId]);
  }

  /** The same for every package on a plan (`admin plan set-dmarc-policy`). */
  lockPresenceDomainsOfPlan(planId: number) {
    return this.lockPresenceDomains(this.db.selectFrom('packages').select('id').where('plan_id', '=', planId));
  }

  setPlanDmarcPolicy(planId: number, policy: DmarcPolicy) {
    return this.db.updateTable('plans').set({ dmarc_policy: policy }).where('id', '=', planId).execute();
  }

  private async lockPresenceDomains(packages: number[] | SelectQueryBuilder<Database, 'packages', { id: number }>) {
    await this.db
      .updateTable('domains')
      .set((eb) => ({ dns_serial: eb.ref('dns_serial') }))
      .where('package_id', 'in', packages)
      .where('has_presence', '=', 1)
      .execute();
    return this.db
      .selectFrom('domains')
      .select(['name', 'dns_update_lock'])
      .where('package_id', 'in', packages)
      .where('has_presence', '=', 1)
      .orderBy('name')
      .execute();
  }
}
