// Operator actions on plans and packages (`hostplane admin plan|package …`): a plan's DNS template
// is checked and a package's base records are reset by the dns-records service handed in.
import { AppError } from '../errors.js';
import { found, invalid } from './operator-errors.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation, serializeTransactions } from '../db/dialect.js';
import { DEFAULT_PHP_VERSIONS, PHP_VERSIONS } from '../php-versions.js';
import { MailServersRepository } from '../provisioning/mail/servers.repository.js';
import { WebServersRepository } from '../provisioning/web/servers.repository.js';
import type { BaseRecordReset, DmarcUpdate, DnsRecordsService } from '../resources/dns-records/dns-records.service.js';
import { DMARC_POLICIES, type DmarcPolicy } from '../db/schema.js';
import { EmailAddressesRepository } from '../resources/email-addresses/email-addresses.repository.js';
import { MailDirectoryRepository } from '../resources/email-addresses/email-addresses.mail-directory.repository.js';
import { AdminRepository } from './admin.repository.js';
import type { CustomersAdminService } from './customers.service.js';

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
  /** The `p=` of its domains' DMARC record [quarantine]. */
  dmarcPolicy?: string;
  recipientsPerHour?: number;
  /** SSH keys a package may hold [10] (API guide "SSH keys"). */
  sshKeysPerPackage?: number;
}

/** A DMARC policy the operator gave, checked: `dmarcPolicy('reject')`. */
function dmarcPolicy(value: string): DmarcPolicy {
  if (!(DMARC_POLICIES as readonly string[]).includes(value)) {
    throw invalid(`Unknown DMARC policy "${value}"; choose from ${DMARC_POLICIES.join(', ')}.`);
  }
  return value as DmarcPolicy;
}

/** What a new plan's mailboxes may send to per hour (docs/decisions/0020-outbound-limits.md). */
export const DEFAULT_RECIPIENTS_PER_HOUR = 500;
const MAX_RECIPIENTS_PER_HOUR = 1_000_000;

/** 1 to 1,000,000: 0 would defer every message for good (its sender would retry for days). */
function checkRecipientsPerHour(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_RECIPIENTS_PER_HOUR) {
    throw invalid(`recipients per hour: a whole number from 1 to ${MAX_RECIPIENTS_PER_HOUR}; got ${n}.`);
  }
  return n;
}

/** What a new plan's packages may hold of SSH keys (API guide "SSH keys"). */
export const DEFAULT_SSH_KEYS_PER_PACKAGE = 10;
const MAX_SSH_KEYS_PER_PACKAGE = 1000;

/** 0 (no SFTP logins by key) to 1000: sshd reads the whole key file at every login. */
function checkSshKeysPerPackage(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_SSH_KEYS_PER_PACKAGE) {
    throw invalid(`SSH keys per package: a whole number from 0 to ${MAX_SSH_KEYS_PER_PACKAGE}; got ${n}.`);
  }
  return n;
}

// Changes of a plan's settings and of a package's plan run one at a time: each reads the plan's
// settings under this lock, so the mailboxes always end with their plan's numbers.
const PLAN_SETTINGS_LOCK = 'hostplane_plan_settings';

export class PackagesAdminService {
  constructor(
    private readonly repo: AdminRepository,
    private readonly customers: CustomersAdminService,
    private readonly dnsRecords: DnsRecordsService,
  ) {}

  async plan(planId: number) {
    return found(await this.repo.plan(planId), `plan ${planId}`);
  }

  listPlans() {
    return this.repo.plans();
  }

  async package(packageId: number) {
    return found(await this.repo.package(packageId), `package ${packageId}`);
  }

  listPackages() {
    return this.repo.packages();
  }

  async createPlan(p: NewPlan) {
    const unknown = (p.phpVersions ?? []).filter((v) => !(PHP_VERSIONS as readonly string[]).includes(v));
    if (unknown.length) {
      throw invalid(`Unknown PHP version${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; choose from ${PHP_VERSIONS.join(', ')}.`);
    }
    const dmarc = dmarcPolicy(p.dmarcPolicy ?? 'quarantine');
    if (p.resellerId != null) await this.customers.reseller(p.resellerId);
    if (p.dnsTemplate != null) this.dnsRecords.checkTemplate(p.dnsTemplate);
    const recipientsPerHour = checkRecipientsPerHour(p.recipientsPerHour ?? DEFAULT_RECIPIENTS_PER_HOUR);
    const sshKeysPerPackage = checkSshKeysPerPackage(p.sshKeysPerPackage ?? DEFAULT_SSH_KEYS_PER_PACKAGE);
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
      dmarc_policy: dmarc,
      recipients_per_hour: recipientsPerHour,
      ssh_keys_per_package: sshKeysPerPackage,
      created_at: nowIso(),
    });
    return { planId: id };
  }

  /**
   * A plan's recipients per mailbox and hour (`hostplane admin plan set-recipients-per-hour`): the
   * mail directory rows of its mailboxes change in the same transaction, so the mail servers'
   * policy services apply it from the next message on. Answers the old value and how many
   * mailboxes follow.
   */
  async setPlanRecipientsPerHour(planId: number, recipientsPerHour: number): Promise<{ planId: number; was: number; mailboxes: number }> {
    checkRecipientsPerHour(recipientsPerHour);
    return this.repo.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, PLAN_SETTINGS_LOCK);
      const repo = new AdminRepository(trx);
      const plan = found(await repo.plan(planId), `plan ${planId}`);
      await repo.lockPackagesOfPlan(planId);
      await repo.setPlanRecipientsPerHour(planId, recipientsPerHour);
      const mailboxes = await new MailDirectoryRepository(trx).setPlanRecipientsPerHour(planId, recipientsPerHour);
      return { planId, was: plan.recipients_per_hour, mailboxes };
    });
  }

  /**
   * A plan's SSH keys per package (`hostplane admin plan set --ssh-keys-per-package`): new keys are
   * counted against it at once; a package that holds more keys keeps them (none is removed), it
   * just cannot add another. Answers the old value.
   */
  async setPlanSshKeysPerPackage(planId: number, sshKeysPerPackage: number): Promise<{ planId: number; was: number }> {
    checkSshKeysPerPackage(sshKeysPerPackage);
    return this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      const plan = found(await repo.plan(planId), `plan ${planId}`);
      await repo.setPlanSshKeysPerPackage(planId, sshKeysPerPackage);
      return { planId, was: plan.ssh_keys_per_package };
    });
  }

  /**
   * A package; `webServer` places its sites and `mailServer` its e-mail addresses (else the default
   * server at its first subdomain or address, docs/decisions/0008-web-servers.md "Web servers are
   * operator data").
   */
  async createPackage(p: { customerId: number; planId: number; name: string; linuxUser?: string; webServer?: string; mailServer?: string }) {
    found(await this.repo.customer(p.customerId), `customer ${p.customerId}`);
    found(await this.repo.plan(p.planId), `plan ${p.planId}`);
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

  /**
   * Moves a package to another plan (`hostplane admin package set-plan`) and resets the base
   * records of each of its presence domains to the new plan's template, except where the domain's
   * dns_update_lock is on (API guide "DNS records"). Custom and managed records stay; template
   * records that clash with them are left out. The package's mailboxes get the new plan's quota
   * (live at the next login or delivery) and sending limit (at the next message). One
   * transaction; one DNS change per reset domain.
   */
  async setPackagePlan(packageId: number, planId: number): Promise<{ packageId: number; planId: number; domains: BaseRecordReset[] }> {
    await this.package(packageId);
    const plan = await this.plan(planId);
    const domains = await this.repo.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, PLAN_SETTINGS_LOCK);
      const template = await this.dnsRecords.planTemplate(trx, plan);
      const repo = new AdminRepository(trx);
      await repo.setPackagePlan(packageId, planId);
      const quota = plan.mailbox_quota_mb * 1024 * 1024;
      // Read under the lock: a change of the plan's setting may have committed since `plan`.
      const { recipients_per_hour: recipientsPerHour } = found(await repo.plan(planId), `plan ${planId}`);
      await new EmailAddressesRepository(trx).setPackageQuota(packageId, quota);
      await new MailDirectoryRepository(trx).setPackageLimits(packageId, { quotaBytes: quota, recipientsPerHour });
      const zones = await repo.lockPresenceDomainsOfPackage(packageId);
      return this.dnsRecords.resetBaseRecords(trx, zones, template);
    });
    return { packageId, planId, domains };
  }

  /**
   * Sets the DMARC policy of a plan (`hostplane admin plan set-dmarc-policy`): new domains of the
   * plan publish it, and the base `_dmarc` record of each presence domain of its packages gets it
   * now, except where the domain's dns_update_lock is on (API guide "DNS records"). One transaction.
   */
  async setDmarcPolicy(planId: number, policy: string): Promise<{ planId: number; dmarcPolicy: DmarcPolicy; domains: DmarcUpdate[] }> {
    const dmarc = dmarcPolicy(policy);
    await this.plan(planId);
    const domains = await this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      await repo.setPlanDmarcPolicy(planId, dmarc);
      return this.dnsRecords.setDmarcPolicy(trx, await repo.lockPresenceDomainsOfPlan(planId), dmarc);
    });
    return { planId, dmarcPolicy: dmarc, domains };
  }
}
