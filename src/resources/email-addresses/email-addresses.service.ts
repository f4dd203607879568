// Rules of e-mail addresses and application passwords (API guide "E-mail addresses", "Password
// rules"). The mail servers read the mail directory at every login and delivery, so most changes
// are live at commit; only creating and deleting an address take a job (decision 0009).
// Plaintext passwords exist only in the request and in the one answer that shows a generated one.
import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import { verifyLegacyPassword } from '../../auth/legacy-password.js';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { AppError, invalidField, limitReached, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues, parseNumericId } from '../../db/ids.js';
import { aceOf, toUnicode } from '../../domain-name.js';
import type { ServiceDeps } from '../service-deps.js';
import { withJobs } from '../../queue/enqueue.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { MailServersRepository, mailReportKey } from '../../provisioning/mail/servers.repository.js';
import { checkPassword, passwordErrors, type PasswordProblem } from '../../security/password-policy.js';
import { generatePassword, randomAlnum } from '../../security/password-generator.js';
import { EmailAddressesRepository, type EmailAddressRow, type MailPackage } from './email-addresses.repository.js';
import type { Precondition } from '../../db/locks.js';
import { MailDirectoryRepository, type AppPasswordRow } from './email-addresses.mail-directory.repository.js';
import { mailboxSieve } from './email-addresses.sieve.js';
import { bumpSettings } from './email-addresses.rspamd-settings.js';
import { bumpDkimForAddress } from '../dns-records/dns-records.dkim.js';
import { waitForMap } from '../../provisioning/mail/versioned-map.js';
import { autoconfigDomain, clientSettings, type ClientSettings } from './email-addresses.autoconfig.js';
import {
  ADDRESS_TYPES, MAX_FORWARD_TARGETS, isSelf, parseAddress, parseAntispam, parseForwardTo, parseTarget, patchAutoresponder, rejectFixedAttributes,
  sameTarget, unicodeAddress, type AddressType, type AutoresponderState,
} from './email-addresses.rules.js';

export interface EmailCreateInput {
  address: string;
  address_type: string;
  description?: string | null;
  antispam?: string;
  forward_to?: unknown;
  password?: string;
}

export interface EmailUpdateInput {
  password?: string;
  description?: string | null;
  antispam?: string;
  autoresponder?: unknown;
  address?: unknown;
  address_type?: unknown;
  forward_to?: unknown;
}

/** A write and what it answers: the row as the write left it, its job, a generated password. */
export interface EmailWrite {
  row: EmailAddressRow;
  job?: QueueJobRow;
  password?: string;
}

export interface EmailSettings {
  brandWords: string[];
  /** The clock of the autoresponder's dates (tests stand on either side of a Berlin midnight). */
  now?: () => Date;
}

/** bcrypt's cost for mailbox passwords: Dovecot verifies it at every login (about 50 ms in C at 10). */
export const BCRYPT_COST = 10;
/** The longest mailbox password: bcrypt uses the first 72 bytes only. */
export const BCRYPT_MAX = 72;
/** Application passwords: 32 characters of [A-Za-z0-9], 190 bits. */
const APP_PASSWORD_LENGTH = 32;
const DEVICE_MAX = 255;
/** How long a PATCH of antispam waits for rspamd at most: two of its polls and the spread to its workers. */
export const PATCH_WAIT_MS = 15_000;

/**
 * `{BLF-CRYPT}$2b$10$…`: the form Dovecot's passdb verifies itself (API guide "E-mail addresses").
 */
export async function blfCrypt(password: string): Promise<string> {
  return `{BLF-CRYPT}${await bcrypt.hash(password, BCRYPT_COST)}`;
}

export const sha256Hex = (secret: string) => crypto.createHash('sha256').update(secret, 'utf8').digest('hex');

const randomAppPassword = (): string => randomAlnum(APP_PASSWORD_LENGTH);

const autoresponderOf = (r: EmailAddressRow): AutoresponderState => ({
  text: r.autoresponder_text,
  active: r.autoresponder_active === 1,
  activates: r.autoresponder_activates,
  expires: r.autoresponder_expires,
});

/** What the mail directory's alias rows of an address are (mail-directory.repository.ts setAliases). */
export function aliasesOf(kind: AddressType, address: string, forwardTo: string[]): string[] {
  if (kind === 'forward') return forwardTo;
  return forwardTo.length ? [address, ...forwardTo] : [];
}

const MB = 1024 * 1024;

export class EmailAddressesService {
  private readonly store: Store;
  private readonly settings: EmailSettings;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.settings = { brandWords: deps.config.brandWords, now: deps.now };
  }

  private get repo() {
    return new EmailAddressesRepository(this.store.db);
  }

  private now() {
    return this.settings.now?.() ?? new Date();
  }

  /** Filters: `address` full addresses in any case and spelling; `domain` the exact domain part. */
  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<EmailAddressRow>> {
    const addresses = filters.address?.map((a) => parseAddress(a)?.ace).filter((a): a is string => a !== undefined);
    const domains = filters.domain?.map(aceOf).filter((d): d is string => d !== null);
    const packageIds = idValues(filters.package_id);
    if (addresses?.length === 0 || domains?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { addresses, domains, packageIds }, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('email-address', id, (n) => this.repo.findVisible(actor, n));
  }

  /** POST: the pending address and its job, with the generated password when none was sent. */
  async create(actor: Actor, input: EmailCreateInput): Promise<EmailWrite> {
    if (!(ADDRESS_TYPES as readonly string[]).includes(input.address_type)) {
      throw invalidField('address_type', `address_type must be one of ${ADDRESS_TYPES.join(', ')}.`);
    }
    const type = input.address_type as AddressType;
    const address = parseAddress(input.address);
    if (!address) throw invalidField('address', 'address must be an e-mail address local@domain: a local part of at most 64 characters (letters a-z, digits, _ and - in dot-separated parts) and a domain.');
    const antispam = input.antispam === undefined ? 'reject' : parseAntispam(input.antispam, type);
    const forwardTo = parseForwardTo(input.forward_to, type, address.ace);
    if (input.password !== undefined && type !== 'mailbox') throw invalidField('password', 'Only a mailbox has a password; a forward logs in nowhere.');

    const target = await this.repo.domainTarget(actor, address.domain);
    if (target.kind === 'none') throw notFound('domain');
    if (target.kind === 'registration-only') throw invalidField('address', `${target.name} is not used in a package, so it has no e-mail.`);
    if (target.packageId === null) throw invalidField('address', `${address.domain} is not used in a package, so it has no e-mail.`);
    const packageId = target.packageId;

    let generated: string | undefined;
    let passwordHash: string | null = null;
    if (type === 'mailbox') {
      const password = input.password ?? (generated = generatePassword(this.passwordContext(address.ace)));
      if (input.password !== undefined) await this.checkChosen(input.password, address.ace);
      passwordHash = await blfCrypt(password);
    }
    try {
      const { row, job } = await withJobs(this.store, async (trx, enqueue) => {
        const repo = new EmailAddressesRepository(trx);
        const pkg = (await repo.lockPackage(packageId))!;
        const server = await this.place(trx, pkg);
        if (await repo.exists(address.ace)) throw this.taken(address.unicode);
        if ((await repo.countInPackage(pkg.id)) >= pkg.max_email_addresses) {
          throw limitReached(
            `This package has reached its limit of ${pkg.max_email_addresses} e-mail address${pkg.max_email_addresses === 1 ? '' : 'es'} (max_email_addresses of its plan).`,
          );
        }
        const quotaBytes = pkg.mailbox_quota_mb * MB;
        const row = await repo.insert({
          customer_id: pkg.customer_id, package_id: pkg.id, mail_server_name: server, address: address.ace, domain: address.domain, zone: target.zone, kind: type,
          description: input.description ?? null, antispam, forward_to: JSON.stringify(forwardTo), quota_bytes: type === 'mailbox' ? quotaBytes : null,
        });
        const dir = new MailDirectoryRepository(trx);
        await dir.addDomain(address.domain, server);
        // Nothing of an earlier address of the same name may log in to this one.
        await dir.removeUser(address.ace);
        if (passwordHash !== null) {
          const recipientsPerHour = await repo.recipientsPerHour(pkg.id);
          await dir.addUser({ address: address.ace, domain: address.domain, passwordHash, quotaBytes, recipientsPerHour, server });
        }
        await dir.setSieve(address.ace, server, mailboxSieve(row));
        await dir.setAliases(address.ace, aliasesOf(type, address.ace, forwardTo), server);
        // Its job is done once the server's rspamd applies the mode too (decision 0019).
        const settingsVersion = await bumpSettings(trx, server, undefined, row);
        // …and signs its mail (decision 0021).
        const dkim = await bumpDkimForAddress(trx, server, row);
        const payload = { ...(settingsVersion === undefined ? {} : { settingsVersion }), ...(dkim === undefined ? {} : { dkim }) };
        // Made in this transaction: a worker of this process may take its job at commit (0010).
        const job = await enqueue({ customerId: row.customer_id, jobType: 'email-address', action: 'create', objectId: String(row.id), payload, fresh: true });
        return { row, job };
      }, actor);
      return { row, job, password: generated };
    } catch (e) {
      if (isUniqueViolation(e)) throw this.taken(address.unicode);
      throw e;
    }
  }

  /**
   * PATCH (200): password, description, antispam and one autoresponder key; live at commit, except
   * a change of antispam that rspamd must fetch: the answer waits until it applies (decision 0019).
   * A `precondition` (API guide "Safe retries") is checked on the address as it is, locked.
   */
  async update(actor: Actor, id: string, input: EmailUpdateInput, precondition?: Precondition<EmailAddressRow>): Promise<EmailAddressRow> {
    rejectFixedAttributes(input as Record<string, unknown>);
    const found = await this.get(actor, id);
    const type = found.kind;
    if (type !== 'mailbox') {
      if (input.password !== undefined) throw invalidField('password', 'Only a mailbox has a password; a forward logs in nowhere.');
      if (input.autoresponder !== undefined) throw invalidField('autoresponder', 'Only a mailbox has an autoresponder.');
    }
    const antispam = input.antispam === undefined ? undefined : parseAntispam(input.antispam, type);
    let passwordHash: string | undefined;
    if (input.password !== undefined) {
      await this.checkChosen(input.password, found.address);
      passwordHash = await blfCrypt(input.password);
    }
    const { row, settingsVersion } = await this.store.db.transaction().execute(async (trx) => {
      const repo = new EmailAddressesRepository(trx);
      const current = await this.locked(repo, found.id);
      const change: Parameters<EmailAddressesRepository['update']>[1] = {};
      if (input.description !== undefined) change.description = input.description;
      if (antispam !== undefined) change.antispam = antispam;
      if (input.autoresponder !== undefined) {
        const next = patchAutoresponder(input.autoresponder, autoresponderOf(current), this.now());
        Object.assign(change, {
          autoresponder_text: next.text, autoresponder_active: next.active ? 1 : 0, autoresponder_activates: next.activates, autoresponder_expires: next.expires,
        });
      }
      precondition?.(current);
      const dir = new MailDirectoryRepository(trx);
      if (passwordHash !== undefined) await dir.setPasswordHash(current.address, passwordHash);
      const row = await repo.update(current.id, change);
      // antispam and the autoresponder are the mailbox's Sieve script: live at commit too.
      if (antispam !== undefined || input.autoresponder !== undefined) await dir.setSieve(row.address, row.mail_server_name, mailboxSieve(row));
      return { row, settingsVersion: await bumpSettings(trx, row.mail_server_name, current, row) };
    });
    // A server that stopped fetching gets the mode when it asks again; the answer says what is stored.
    if (settingsVersion !== undefined) await waitForMap(this.store.db, row.mail_server_name, 'settings', settingsVersion, { timeoutMs: PATCH_WAIT_MS });
    return row;
  }

  /** POST …/password (200): a new generated mailbox password, live at commit; 409 for a forward. */
  async resetPassword(actor: Actor, id: string): Promise<EmailWrite & { password: string }> {
    const found = await this.get(actor, id);
    if (found.kind !== 'mailbox') throw new AppError('invalid_state', 'A forward has no password; only mailboxes do.');
    const password = generatePassword(this.passwordContext(found.address));
    const hash = await blfCrypt(password);
    const row = await this.store.db.transaction().execute(async (trx) => {
      const repo = new EmailAddressesRepository(trx);
      const current = await this.locked(repo, found.id);
      await new MailDirectoryRepository(trx).setPasswordHash(current.address, hash);
      return repo.update(current.id, {});
    });
    return { row, password };
  }

  /** DELETE (202 with the job): logins and deliveries stop at commit; the job removes the mail. */
  async delete(actor: Actor, id: string, precondition?: Precondition<EmailAddressRow>): Promise<QueueJobRow> {
    const found = await this.get(actor, id);
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new EmailAddressesRepository(trx);
      await repo.lock(found.id);
      const row = await repo.byId(found.id);
      if (!row) throw notFound('email-address');
      precondition?.(row);
      const key = { jobType: 'email-address', action: 'delete', objectId: String(row.id) } as const;
      return enqueue.unlessStanding(row.state === 'deleting', key, async () => {
        await repo.update(row.id, { state: 'deleting' });
        // The map drops it; nothing waits: SMTP refuses the address from the commit on.
        await bumpSettings(trx, row.mail_server_name, row, undefined);
        const dir = new MailDirectoryRepository(trx);
        await dir.deactivateUser(row.address);
        await dir.setAliases(row.address, [], row.mail_server_name);
        return enqueue({ ...key, customerId: row.customer_id, payload: {} });
      });
    }, actor);
  }

  /** POST …/forward-to/{target} (204): adds a target; one already there is a no-op. */
  async addForwardTarget(actor: Actor, id: string, rawTarget: string): Promise<void> {
    const target = this.targetOf(rawTarget);
    const found = await this.get(actor, id);
    if (isSelf(target, found.address)) throw new AppError('invalid_api_data', 'An address cannot forward to itself.', { parameter: 'target' });
    await this.changeTargets(found.id, (targets) => {
      if (targets.some((t) => sameTarget(t, target))) return null;
      if (targets.length >= MAX_FORWARD_TARGETS) {
        throw new AppError('invalid_api_data', `An address forwards to at most ${MAX_FORWARD_TARGETS} addresses.`, { parameter: 'target' });
      }
      return [...targets, target];
    });
  }

  /** DELETE …/forward-to/{target} (204): 404 when it is not a target; a forward keeps at least one (409). */
  async removeForwardTarget(actor: Actor, id: string, rawTarget: string): Promise<void> {
    const target = this.targetOf(rawTarget);
    const found = await this.get(actor, id);
    await this.changeTargets(found.id, (targets, row) => {
      const rest = targets.filter((t) => !sameTarget(t, target));
      if (rest.length === targets.length) throw new AppError('resource_not_found', `${rawTarget} is not a forwarding target of this address.`);
      if (rest.length === 0 && row.kind === 'forward') {
        throw new AppError('invalid_state', 'A forward needs at least one target: add another first, or delete the forward.');
      }
      return rest;
    });
  }

  /**
   * Application passwords of a mailbox (the list is an addition to the original API), never with
   * their secrets.
   */
  async appPasswords(actor: Actor, id: string, page: Page | null): Promise<PageResult<AppPasswordRow>> {
    const found = await this.get(actor, id);
    return new MailDirectoryRepository(this.store.db).appPasswords(found.address, page);
  }

  /** POST …/application-passwords (201): the password is in this answer only; it logs in as the mailbox at once. */
  async createAppPassword(actor: Actor, id: string, input: { device: unknown; application: unknown }): Promise<{ row: AppPasswordRow; password: string }> {
    for (const key of ['device', 'application'] as const) {
      const v = input[key];
      if (typeof v !== 'string' || v.trim() === '') throw invalidField(key, `${key} must be a non-empty text.`);
      if (v.length > DEVICE_MAX) throw invalidField(key, `${key} must be at most ${DEVICE_MAX} characters.`);
    }
    const found = await this.get(actor, id);
    if (found.kind !== 'mailbox') throw new AppError('invalid_state', 'Only mailboxes have application passwords; this address is a forward.');
    const password = randomAppPassword();
    // Under the address's lock: a DELETE committed meanwhile is seen, so no password outlives its mailbox.
    const row = await this.store.db.transaction().execute(async (trx) => {
      const current = await this.locked(new EmailAddressesRepository(trx), found.id);
      return new MailDirectoryRepository(trx).addAppPassword({
        address: current.address, secretSha256: sha256Hex(password), device: input.device as string, application: input.application as string,
      });
    });
    return { row, password };
  }

  /** DELETE …/application-passwords/{id} (204): it stops working at commit. */
  async deleteAppPassword(actor: Actor, id: string, appId: string): Promise<void> {
    const found = await this.get(actor, id);
    const n = parseNumericId(appId);
    if (n === null || !(await new MailDirectoryRepository(this.store.db).removeAppPassword(found.address, n))) throw notFound('application-password');
  }

  /**
   * A mail server reported a successful login with application password `appId` of `login`: its
   * last_used_at becomes now (at most once a minute per password). `key` must be the report key
   * (mailReportKey) of a registered mail server, and the address must live on that server;
   * anything else is ignored.
   */
  async recordAppPasswordUse(key: string, login: string, appId: string): Promise<void> {
    const id = parseNumericId(appId);
    const address = parseAddress(login)?.ace;
    if (id === null || address === undefined) return;
    const digest = (k: string) => crypto.createHash('sha256').update(k).digest();
    const offered = digest(key);
    const server = (await new MailServersRepository(this.store.db).list()).find((s) => crypto.timingSafeEqual(digest(mailReportKey(s.doveadm_key)), offered));
    if (!server) return;
    await new MailDirectoryRepository(this.store.db).touchAppPassword(id, address, server.name, new Date(Date.now() - 60_000).toISOString());
  }

  /**
   * The mail client settings a request to `autoconfig.<domain>` (its Host) answers with, from the
   * mail server of the presence domain's package (API guide "Mail client set-up"), or null.
   */
  async autoconfigFor(host: string): Promise<{ domain: string; display: string; settings: ClientSettings } | null> {
    const named = autoconfigDomain(host);
    const domain = named === null ? null : aceOf(named);
    const server = domain === null ? undefined : await new MailServersRepository(this.store.db).ofPresenceDomain(domain);
    return server ? { domain: domain!, display: toUnicode(domain!), settings: clientSettings(server) } : null;
  }

  /** Whether `host` is an autoconfig name this service answers: on-demand TLS may get it a certificate. */
  async servesAutoconfig(host: string): Promise<boolean> {
    return (await this.autoconfigFor(host)) !== null;
  }

  // ---- shared steps -----------------------------------------------------------------------------

  private passwordContext(address: string) {
    return { userName: unicodeAddress(address), domain: address.slice(address.lastIndexOf('@') + 1), brandWords: this.settings.brandWords };
  }

  /**
   * A chosen password: every rule of the API guide "Password rules" (one error per rule) and the
   * customer-portal rule (API guide "E-mail addresses").
   */
  private async checkChosen(password: string, address: string): Promise<void> {
    const problems: PasswordProblem[] = checkPassword(password, this.passwordContext(address));
    // bcrypt reads 72 bytes (the allowed characters are ASCII): a longer password would log in with its first 72 only.
    if (password.length > BCRYPT_MAX) problems.push({ rule: 'length', detail: `The password must be at most ${BCRYPT_MAX} characters long.` });
    if (problems.length) throw passwordErrors(problems);
    for (const hash of await this.repo.portalPasswordHashes([address, unicodeAddress(address)])) {
      if (await verifyLegacyPassword(password, hash)) {
        throw passwordErrors([{ rule: 'portal', detail: 'This is the customer-portal password of the contact with this e-mail address; choose another one.' }]);
      }
    }
  }

  /**
   * The address row under its lock until the transaction ends (writes on one address run one after
   * the other, on PostgreSQL too), refusing one that is gone (404) or being deleted (409).
   */
  private async locked(repo: EmailAddressesRepository, id: number): Promise<EmailAddressRow> {
    await repo.lock(id);
    const row = await repo.byId(id);
    if (!row) throw notFound('email-address');
    if (row.state === 'deleting') throw new AppError('invalid_state', 'This address is being deleted.');
    return row;
  }

  private targetOf(raw: string): string {
    const target = parseTarget(raw);
    if (target === null) throw new AppError('invalid_api_data', `${raw} is not an e-mail address.`, { parameter: 'target' });
    return target;
  }

  /** Changes an address's targets and its alias rows in one transaction; `change` answers null for "nothing to do". */
  private async changeTargets(id: number, change: (targets: string[], row: EmailAddressRow) => string[] | null): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const repo = new EmailAddressesRepository(trx);
      const row = await this.locked(repo, id);
      const next = change(JSON.parse(row.forward_to) as string[], row);
      if (next === null) return;
      await repo.update(row.id, { forward_to: JSON.stringify(next) });
      await new MailDirectoryRepository(trx).setAliases(row.address, aliasesOf(row.kind, row.address, next), row.mail_server_name);
    });
  }

  private taken(address: string) {
    return invalidField('address', `${address} exists already.`, 'conflict');
  }

  /** The package's mail server; a package without one is placed on the default now. */
  private async place(trx: Kysely<Database>, pkg: MailPackage): Promise<string> {
    if (pkg.mail_server_name) return pkg.mail_server_name;
    const server = await new MailServersRepository(trx).defaultServer();
    if (!server) throw new AppError('service_unavailable', 'No mail server is available for e-mail addresses yet. Please try again later or contact support.');
    await new EmailAddressesRepository(trx).placePackage(pkg.id, server.name);
    return server.name;
  }
}
