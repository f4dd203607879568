// Operator actions used by the CLI (`hostplane admin …`), the demo loader and test factories.
import crypto from 'node:crypto';
import { AppError } from '../errors.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation } from '../db/dialect.js';
import { generateToken, hashToken, tokenPrefix } from '../auth/tokens.js';
import { hashLegacyPassword } from '../auth/legacy-password.js';
import { toAce, toUnicode } from '../resources/domains/domain-name.js';
import { AdminRepository } from './admin.repository.js';
import { loadConfig, type Config } from '../config.js';
import { recordChange } from '../provisioning/dns/propagation.js';
import { DnsRecordsRepository } from '../resources/dns-records/dns-records.repository.js';
import {
  checkTemplate, generateDkimKey, insertBaseRecords, insertDkimRecord, planTemplate,
} from '../resources/dns-records/dns-records.base.js';

export interface NewCustomer {
  organization?: string | null;
  reseller?: boolean;
  resellerId?: number | null;
  contact: { name: string; email: string; phone?: string | null };
}

export interface NewPlan {
  name: string;
  resellerId?: number | null;
  maxDatabases?: number;
  maxEmailAddresses?: number;
  mailboxQuotaMb?: number;
  maxSubdomains?: number;
  webspaceMb?: number;
  databaseVersions?: string[];
  phpVersions?: string[];
  /** Base records of the plan's presence domains (records with the API's attribute names); null → operator default. */
  dnsTemplate?: unknown[] | null;
}

export interface NewDomain {
  name: string;
  customerId: number;
  /** Presence: the package the domain is used with. */
  packageId?: number | null;
  /** Registered with the service: expiry defaults to one year after creation. */
  registered?: boolean;
  expiresAt?: string;
}

const invalid = (detail: string) => new AppError('invalid_api_data', detail);

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random legacy password: 24 base62 characters (~143 bits), unbiased (bytes ≥ 248 are redrawn). */
export function generateLegacyPassword(length = 24): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += PASSWORD_ALPHABET[b % 62];
    }
  }
  return out;
}

/** The settings operator actions use: the default base records and TTL of DNS records. */
export type AdminSettings = Pick<Config, 'dnsBase' | 'dnsDefaultTtl'>;

let defaultSettings: AdminSettings | undefined;
const defaults = () => (defaultSettings ??= loadConfig({}));

/** What `admin package set-plan` did to one presence domain of the package. */
export interface BaseRecordReset {
  domain: string;
  /** reset: base records replaced by the new plan's; locked: dns_update_lock is on, nothing changed (spec §4.3.6). */
  base_records: 'reset' | 'locked';
  removed: number;
  inserted: number;
  /** Template records left out because a kept (custom or managed) record clashes with them. */
  skipped: number;
}

export class AdminService {
  private readonly settings: AdminSettings;
  /** `new AdminService(new AdminRepository(store.db), config)`; settings default to the built-in defaults. */
  constructor(readonly repo: AdminRepository, settings?: AdminSettings) {
    this.settings = settings ?? defaults();
  }

  /** Creates a customer with its main contact; returns both ids. */
  async createCustomer(c: NewCustomer) {
    if (c.resellerId != null) {
      const reseller = await this.repo.customer(c.resellerId);
      if (!reseller?.is_reseller) throw invalid(`Customer ${c.resellerId} is not a reseller.`);
    }
    if (!c.contact.name.trim() || !/^[^@\s]+@[^@\s]+$/.test(c.contact.email)) throw invalid('A contact needs a name and an e-mail address.');
    return this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      const { id } = await repo.insertCustomer({
        reseller_id: c.resellerId ?? null,
        is_reseller: c.reseller ? 1 : 0,
        organization: c.organization ?? null,
        is_login_disabled: 0,
        external_customer_id: null,
        legacy_password_hash: null,
        created_at: nowIso(),
      });
      const contact = await repo.insertContact({
        customer_id: id,
        name: c.contact.name,
        email: c.contact.email,
        phone: c.contact.phone ?? null,
        is_main: 1,
        created_at: nowIso(),
      });
      return { customerId: id, contactId: contact.id };
    });
  }

  async createContact(customerId: number, c: { name: string; email: string; phone?: string | null }) {
    if (!(await this.repo.customer(customerId))) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    const { id } = await this.repo.insertContact({ customer_id: customerId, name: c.name, email: c.email, phone: c.phone ?? null, is_main: 0, created_at: nowIso() });
    return { contactId: id };
  }

  async deleteContact(contactId: number) {
    const contact = await this.repo.contact(contactId);
    if (!contact) throw new AppError('resource_not_found', `No contact ${contactId}.`);
    if (contact.is_main) throw new AppError('invalid_state', 'The main contact of a customer cannot be deleted.');
    await this.repo.deleteContact(contactId);
  }

  /** Issues a token for a contact (spec §5.4); the token is returned once and stored only as a hash. */
  async issueToken(contactId: number, label: string | null = null) {
    if (!(await this.repo.contact(contactId))) throw new AppError('resource_not_found', `No contact ${contactId}.`);
    const token = generateToken();
    const { id } = await this.repo.insertToken({ contact_id: contactId, token_hash: hashToken(token), token_prefix: tokenPrefix(token), label, created_at: nowIso(), revoked_at: null });
    return { tokenId: id, token };
  }

  listTokens(contactId?: number) {
    return this.repo.tokens(contactId);
  }

  async revokeToken(tokenId: number) {
    const r = await this.repo.revokeToken(tokenId, nowIso());
    if (Number(r.numUpdatedRows) === 0) throw new AppError('resource_not_found', `No active token ${tokenId}.`);
  }

  /** Sets a freshly generated legacy password and returns it; it is shown once, only its hash is kept. */
  async setGeneratedLegacyPassword(customerId: number): Promise<string> {
    const password = generateLegacyPassword();
    await this.setLegacyPassword(customerId, password);
    return password;
  }

  listCustomers() {
    return this.repo.customersWithMainContact();
  }

  async customer(customerId: number) {
    const [c] = await this.repo.customersWithMainContact(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    return c;
  }

  async listContacts(customerId?: number) {
    if (customerId !== undefined && !(await this.repo.customer(customerId))) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    return this.repo.contacts(customerId);
  }

  async contact(contactId: number) {
    const c = await this.repo.contact(contactId);
    if (!c) throw new AppError('resource_not_found', `No contact ${contactId}.`);
    return c;
  }

  async token(tokenId: number) {
    const t = await this.repo.token(tokenId);
    if (!t) throw new AppError('resource_not_found', `No token ${tokenId}.`);
    return t;
  }

  async plan(planId: number) {
    const p = await this.repo.plan(planId);
    if (!p) throw new AppError('resource_not_found', `No plan ${planId}.`);
    return p;
  }

  listPlans() {
    return this.repo.plans();
  }

  async package(packageId: number) {
    const p = await this.repo.package(packageId);
    if (!p) throw new AppError('resource_not_found', `No package ${packageId}.`);
    return p;
  }

  listPackages() {
    return this.repo.packages();
  }

  async domain(name: string) {
    const d = await this.repo.domain(name);
    if (!d) throw new AppError('resource_not_found', `No domain ${name}.`);
    return d;
  }

  listDomains() {
    return this.repo.domains();
  }

  /** true while the database has no customer: the demo dataset may be loaded. */
  isEmpty() {
    return this.repo.isEmpty();
  }

  async setLegacyPassword(customerId: number, password: string | null) {
    const c = await this.repo.customer(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    if (!c.is_reseller) throw invalid('Only resellers have a legacy API password (spec §5.6).');
    if (password !== null && password.length < 12) throw invalid('A legacy password needs at least 12 characters.');
    await this.repo.setLegacyPassword(customerId, password === null ? null : await hashLegacyPassword(password));
  }

  async createPlan(p: NewPlan) {
    if (p.resellerId != null && !(await this.repo.customer(p.resellerId))?.is_reseller) throw invalid(`Customer ${p.resellerId} is not a reseller.`);
    if (p.dnsTemplate != null) checkTemplate(p.dnsTemplate, this.settings.dnsDefaultTtl, 'DNS template');
    const { id } = await this.repo.insertPlan({
      reseller_id: p.resellerId ?? null,
      name: p.name,
      max_databases: p.maxDatabases ?? 5,
      max_email_addresses: p.maxEmailAddresses ?? 50,
      mailbox_quota_mb: p.mailboxQuotaMb ?? 2048,
      max_subdomains: p.maxSubdomains ?? 20,
      webspace_mb: p.webspaceMb ?? 10240,
      database_versions: JSON.stringify(p.databaseVersions ?? ['mariadb-10.11']),
      php_versions: JSON.stringify(p.phpVersions ?? ['8.3', '8.4', '8.5']),
      dns_template: p.dnsTemplate == null ? null : JSON.stringify(p.dnsTemplate),
      created_at: nowIso(),
    });
    return { planId: id };
  }

  async createPackage(p: { customerId: number; planId: number; name: string; linuxUser?: string }) {
    if (!(await this.repo.customer(p.customerId))) throw new AppError('resource_not_found', `No customer ${p.customerId}.`);
    if (!(await this.repo.plan(p.planId))) throw new AppError('resource_not_found', `No plan ${p.planId}.`);
    const linuxUser = p.linuxUser ?? `u${p.customerId}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
    if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(linuxUser)) throw invalid('linux user: lower-case letters, digits, _ and -, at most 32 characters.');
    try {
      const { id } = await this.repo.insertPackage({ customer_id: p.customerId, plan_id: p.planId, name: p.name, linux_user: linuxUser, created_at: nowIso() });
      return { packageId: id, linuxUser };
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `Linux user ${linuxUser} exists.`);
      throw e;
    }
  }

  async createDomain(d: NewDomain) {
    const ace = toAce(d.name.toLowerCase());
    if (!ace) throw invalid(`${d.name}: not ACE-encodable.`);
    if (!d.registered && d.packageId == null) throw invalid('A domain is registered, assigned to a package (presence), or both.');
    let template: ReturnType<typeof planTemplate> | null = null;
    if (d.packageId != null) {
      const pkg = await this.repo.package(d.packageId);
      if (!pkg) throw new AppError('resource_not_found', `No package ${d.packageId}.`);
      if (pkg.customer_id !== d.customerId) throw invalid(`Package ${d.packageId} belongs to another customer.`);
      template = planTemplate(await this.plan(pkg.plan_id), this.settings.dnsBase, this.settings.dnsDefaultTtl);
    } else if (!(await this.repo.customer(d.customerId))) {
      throw new AppError('resource_not_found', `No customer ${d.customerId}.`);
    }
    // A presence domain is served by our DNS servers from the start: the plan's base records and
    // a managed DKIM key, written with the domain in one transaction (spec §4.3.6, issue 3 item 4).
    const dkim = template ? await generateDkimKey() : null;
    const created = nowIso();
    try {
      await this.repo.db.transaction().execute(async (trx) => {
        await new AdminRepository(trx).insertDomain({
          name: ace,
          name_unicode: toUnicode(ace),
          customer_id: d.customerId,
          package_id: d.packageId ?? null,
          is_registered: d.registered ? 1 : 0,
          registration_created_at: d.registered ? created : null,
          registration_expires_at: d.registered ? (d.expiresAt ?? new Date(Date.now() + 365 * 86400_000).toISOString()) : null,
          registration_status: d.registered ? 'active' : null,
          has_presence: d.packageId != null ? 1 : 0,
          dns_update_lock: 0,
          dns_migration_mode: 0,
          created_at: created,
          dkim_private_key: dkim?.privateKeyPem ?? null,
        });
        if (template && dkim) {
          const records = new DnsRecordsRepository(trx);
          await insertBaseRecords(records, ace, template);
          await insertDkimRecord(records, ace, dkim, this.settings.dnsDefaultTtl);
          await recordChange(trx, ace);
        }
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `Domain ${ace} exists.`);
      throw e;
    }
    return { domain: ace };
  }

  /**
   * Moves a package to another plan (`hostplane admin package set-plan`) and resets the base
   * records of each of its presence domains to the new plan's template, except where the domain's
   * dns_update_lock is on (spec §4.3.6). Custom and managed records stay; template records that
   * clash with them are left out. One transaction; one DNS change per reset domain.
   */
  async setPackagePlan(packageId: number, planId: number): Promise<{ packageId: number; planId: number; domains: BaseRecordReset[] }> {
    await this.package(packageId);
    const template = planTemplate(await this.plan(planId), this.settings.dnsBase, this.settings.dnsDefaultTtl);
    const domains = await this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      await repo.setPackagePlan(packageId, planId);
      const zones = await repo.lockPresenceDomainsOfPackage(packageId);
      const records = new DnsRecordsRepository(trx);
      const out: BaseRecordReset[] = [];
      for (const z of zones) {
        if (z.dns_update_lock) {
          out.push({ domain: z.name, base_records: 'locked', removed: 0, inserted: 0, skipped: 0 });
          continue;
        }
        const removed = await records.deleteTagged(z.name, 'base');
        const { inserted, skipped } = await insertBaseRecords(records, z.name, template);
        out.push({ domain: z.name, base_records: 'reset', removed, inserted, skipped });
      }
      for (const r of out) if (r.base_records === 'reset') await recordChange(trx, r.domain);
      return out;
    });
    return { packageId, planId, domains };
  }
}
