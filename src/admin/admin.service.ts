// Operator actions used by the CLI (`hostplane admin …`), the demo loader and test factories.
import crypto from 'node:crypto';
import { AppError } from '../errors.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation } from '../db/dialect.js';
import { generateToken, hashToken, tokenPrefix } from '../auth/tokens.js';
import { hashLegacyPassword } from '../auth/legacy-password.js';
import { aceOf, notADomainName, toUnicode } from '../domain-name.js';
import type { Store } from '../db/index.js';
import { AdminRepository } from './admin.repository.js';
import { loadConfig } from '../config.js';
import { DnsRecordsService, type BaseRecordReset, type DnsRecordsSettings, type PreparedBaseRecords } from '../resources/dns-records/dns-records.service.js';
import { isEmailAddress } from '../email-address.js';
import { DEFAULT_PHP_VERSIONS, PHP_VERSIONS } from '../php-versions.js';
import { MailServersRepository } from '../provisioning/mail/servers.repository.js';
import { EmailAddressesRepository } from '../resources/email-addresses/email-addresses.repository.js';
import { MailDirectoryRepository } from '../resources/email-addresses/mail-directory.repository.js';
import { WebServersRepository } from '../provisioning/web/servers.repository.js';
import { SubdomainsService } from '../resources/subdomains/subdomains.service.js';

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

/** The contact rules of the customer menu: a name and an address that can receive mail. */
function checkContact(c: { name: string; email: string }) {
  if (!c.name.trim()) throw invalid('A contact needs a name.');
  if (!isEmailAddress(c.email)) throw invalid(`"${c.email}" is not an e-mail address; write it as name@example.com.`);
}

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
export type AdminSettings = DnsRecordsSettings;

let defaultSettings: AdminSettings | undefined;
const defaults = () => (defaultSettings ??= loadConfig({}));

/**
 * Operator actions on customers, contacts, tokens, plans, packages and domains. What they do to a
 * resource's own objects (the DNS records of a new domain, their reset on a plan change) is that
 * resource's service's; this layer only calls it.
 */
export class AdminService {
  readonly repo: AdminRepository;
  private readonly dnsRecords: DnsRecordsService;
  private readonly subdomains: SubdomainsService;
  /** `new AdminService(store, config)`; settings default to the built-in defaults. */
  constructor(store: Store, settings?: AdminSettings) {
    this.repo = new AdminRepository(store.db);
    this.dnsRecords = new DnsRecordsService(store, settings ?? defaults());
    this.subdomains = new SubdomainsService(store, this.dnsRecords, settings ?? defaults());
  }

  /**
   * A subdomain made in the customer menu (API-NOTES §10): as the domain's owner would through the
   * API, except that a redirect may come without a target (uninitialized). Answers the row and its job.
   */
  async createSubdomain(v: { domain: string; subdomain: string; type: string; target?: string; dynamic?: boolean; path?: string; php?: string; description?: string }) {
    const ace = aceOf(v.domain);
    const domain = ace === null ? undefined : await this.repo.domain(ace);
    if (!domain) throw new AppError('resource_not_found', `No domain ${v.domain}.`);
    const owner = { customerId: domain.customer_id, isReseller: false, contactId: null };
    return this.subdomains.create(
      owner,
      {
        subdomain_type: v.type,
        domain: domain.name,
        subdomain: v.subdomain,
        description: v.description,
        webspace: v.path !== undefined || v.php !== undefined ? { path: v.path, php_version: v.php } : undefined,
        redirect: v.target !== undefined || v.dynamic !== undefined ? { target: v.target, dynamic: v.dynamic } : undefined,
      },
      { fromMenu: true },
    );
  }

  /** Creates a customer with its main contact; returns both ids. */
  async createCustomer(c: NewCustomer) {
    checkContact(c.contact);
    if (c.resellerId != null) await this.reseller(c.resellerId);
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
    checkContact(c);
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

  /** The customer `customerId`, which must be a reseller. */
  async reseller(customerId: number) {
    const c = await this.repo.customer(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    if (!c.is_reseller) throw invalid(`Customer ${customerId} is not a reseller.`);
    return c;
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

  /**
   * The contact's customer-portal password (its e-mail address is the portal user name), stored as
   * a slow hash; null removes it. A mailbox with that address may not use it (spec §4.3.2).
   */
  async setPortalPassword(contactId: number, password: string | null) {
    if (!(await this.repo.contact(contactId))) throw new AppError('resource_not_found', `No contact ${contactId}.`);
    if (password !== null && password.length < 12) throw invalid('A portal password needs at least 12 characters.');
    await this.repo.setPortalPassword(contactId, password === null ? null : await hashLegacyPassword(password));
  }

  async setLegacyPassword(customerId: number, password: string | null) {
    const c = await this.repo.customer(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    if (!c.is_reseller) throw invalid('Only resellers have a legacy API password.');
    if (password !== null && password.length < 12) throw invalid('A legacy password needs at least 12 characters.');
    await this.repo.setLegacyPassword(customerId, password === null ? null : await hashLegacyPassword(password));
  }

  async createPlan(p: NewPlan) {
    const unknown = (p.phpVersions ?? []).filter((v) => !(PHP_VERSIONS as readonly string[]).includes(v));
    if (unknown.length) {
      throw invalid(`Unknown PHP version${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; choose from ${PHP_VERSIONS.join(', ')}.`);
    }
    if (p.resellerId != null) await this.reseller(p.resellerId);
    if (p.dnsTemplate != null) this.dnsRecords.checkTemplate(p.dnsTemplate);
    const { id } = await this.repo.insertPlan({
      reseller_id: p.resellerId ?? null,
      name: p.name,
      max_databases: p.maxDatabases ?? 5,
      max_email_addresses: p.maxEmailAddresses ?? 50,
      mailbox_quota_mb: p.mailboxQuotaMb ?? 2048,
      max_subdomains: p.maxSubdomains ?? 20,
      webspace_mb: p.webspaceMb ?? 10240,
      database_versions: JSON.stringify(p.databaseVersions ?? ['mariadb-10.11']),
      php_versions: JSON.stringify(p.phpVersions ?? DEFAULT_PHP_VERSIONS),
      dns_template: p.dnsTemplate == null ? null : JSON.stringify(p.dnsTemplate),
      created_at: nowIso(),
    });
    return { planId: id };
  }

  /**
   * A package; `webServer` places its sites and `mailServer` its e-mail addresses (else the default
   * server at its first subdomain or address, API-NOTES §10 "Placement").
   */
  async createPackage(p: { customerId: number; planId: number; name: string; linuxUser?: string; webServer?: string; mailServer?: string }) {
    if (!(await this.repo.customer(p.customerId))) throw new AppError('resource_not_found', `No customer ${p.customerId}.`);
    if (!(await this.repo.plan(p.planId))) throw new AppError('resource_not_found', `No plan ${p.planId}.`);
    if (p.webServer !== undefined && !(await new WebServersRepository(this.repo.db).byName(p.webServer))) {
      throw new AppError('resource_not_found', `No web server is named "${p.webServer}" (see \`hostplane admin web-server list\`).`);
    }
    if (p.mailServer !== undefined && !(await new MailServersRepository(this.repo.db).byName(p.mailServer))) {
      throw new AppError('resource_not_found', `No mail server is named "${p.mailServer}" (see \`hostplane admin mail-server list\`).`);
    }
    const linuxUser = p.linuxUser ?? `u${p.customerId}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
    if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(linuxUser)) throw invalid('linux user: lower-case letters, digits, _ and -, at most 32 characters.');
    try {
      const { id } = await this.repo.insertPackage({
        customer_id: p.customerId, plan_id: p.planId, name: p.name, linux_user: linuxUser, created_at: nowIso(), web_server_name: p.webServer ?? null,
        mail_server_name: p.mailServer ?? null,
      });
      return { packageId: id, linuxUser };
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `Linux user ${linuxUser} exists.`);
      throw e;
    }
  }

  async createDomain(d: NewDomain) {
    const ace = aceOf(d.name);
    if (!ace) throw invalid(notADomainName(d.name));
    if (!d.registered && d.packageId == null) throw invalid('A domain is registered, assigned to a package (presence), or both.');
    // A presence domain is served by our DNS servers from the start (spec §4.3.6, issue 3 item 4).
    let base: PreparedBaseRecords | null = null;
    if (d.packageId != null) {
      const pkg = await this.repo.package(d.packageId);
      if (!pkg) throw new AppError('resource_not_found', `No package ${d.packageId}.`);
      if (pkg.customer_id !== d.customerId) throw invalid(`Package ${d.packageId} belongs to another customer.`);
      base = await this.dnsRecords.prepareBaseRecords(await this.plan(pkg.plan_id));
    } else if (!(await this.repo.customer(d.customerId))) {
      throw new AppError('resource_not_found', `No customer ${d.customerId}.`);
    }
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
          dkim_private_key: base?.dkim.privateKeyPem ?? null,
        });
        if (base) await this.dnsRecords.addBaseRecords(trx, ace, base);
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
   * clash with them are left out. The package's mailboxes get the new plan's quota (live at the
   * next login or delivery). One transaction; one DNS change per reset domain.
   */
  async setPackagePlan(packageId: number, planId: number): Promise<{ packageId: number; planId: number; domains: BaseRecordReset[] }> {
    await this.package(packageId);
    const plan = await this.plan(planId);
    const template = this.dnsRecords.planTemplate(plan);
    const domains = await this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      await repo.setPackagePlan(packageId, planId);
      const quota = plan.mailbox_quota_mb * 1024 * 1024;
      await new EmailAddressesRepository(trx).setPackageQuota(packageId, quota);
      await new MailDirectoryRepository(trx).setPackageQuota(packageId, quota);
      const zones = await repo.lockPresenceDomainsOfPackage(packageId);
      return this.dnsRecords.resetBaseRecords(trx, zones, template);
    });
    return { packageId, planId, domains };
  }
}
