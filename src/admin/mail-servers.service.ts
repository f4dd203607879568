// The registry of mail servers (API guide "E-mail addresses";
// docs/decisions/0009-mail-directory.md): operator data, written by `hostplane admin mail-server
// …`. The first server becomes the default; packages that name no mail server are placed on the
// default at their first address. A server is registered only after its doveadm HTTP API answered
// with the key given and offers the commands the mail driver uses; so is a new doveadm URL or key
// (setDoveadm). The key is stored (the driver sends it) and never leaves this module: every answer
// is a `MailServerView`, and doveadmMatches only says whether a given key is the stored one.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation, serializeTransactions } from '../db/dialect.js';
import { AppError } from '../errors.js';
import { hostPort, parseHostPort } from '../host-port.js';
import { DoveadmClient, DoveadmError } from '../provisioning/mail/doveadm.js';
import { MailServersRepository, type MailServerRow } from '../provisioning/mail/servers.repository.js';
import { removeServer } from './server-registry.js';

export interface NewMailServer {
  name: string;
  /** The doveadm HTTP API, e.g. http://10.0.0.5:8080 (its /doveadm/v1 is asked). */
  doveadmUrl: string;
  /** The doveadm API key (doveadm_api_key), as read from the operator's file. */
  doveadmKey: string;
  /** host:port of its SMTP service (Postfix). */
  smtp: string;
  /** host:port of its IMAP service, as mail clients reach it. */
  imap: string;
  isDefault?: boolean;
}

/** What is shown of a mail server (list, --json): never the doveadm key. */
export type MailServerView = {
  id: string;
  name: string;
  doveadm_url: string;
  smtp: string;
  imap: string;
  default: boolean;
  created_at: string;
};

/** Where a registered server's doveadm HTTP API is, and its key (setDoveadm, doveadmMatches). */
export interface MailServerDoveadm {
  doveadmUrl: string;
  doveadmKey: string;
}

export interface MailServersOptions {
  /** Per doveadm request made while registering (default 10 000 ms). */
  timeoutMs?: number;
  /** PEM roots an https:// doveadm's certificate must chain to, instead of Node's own (node setup: the system's). */
  ca?: string;
}

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
/** What the mail driver asks doveadm (driver.ts); a doveadm without one of them cannot serve hostplane. */
export const DOVEADM_COMMANDS = ['user', 'kick', 'fsStat', 'fsDelete', 'quotaGet'];

const invalid = (detail: string) => new AppError('invalid_api_data', detail);
const notFound = (name: string) => new AppError('resource_not_found', `No mail server is named "${name}".`);

export function mailServerView(row: MailServerRow): MailServerView {
  return {
    id: String(row.id),
    name: row.name,
    doveadm_url: row.doveadm_url,
    smtp: row.smtp,
    imap: row.imap,
    default: row.is_default === 1,
    created_at: row.created_at,
  };
}

function checkHostPort(option: string, value: string): string {
  const hp = parseHostPort(value);
  if (!hp) throw invalid(`${option} must be host:port, e.g. mx1.example.com:25 or [2001:db8::25]:25; got "${value}".`);
  return hostPort(hp.host, hp.port);
}

/** The doveadm URL as stored: scheme, host and port only (no credentials, path or query: the path /doveadm/v1 is added). */
function checkDoveadmUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw invalid(`--doveadm-url must be the URL of the doveadm HTTP API, e.g. http://127.0.0.1:8080; got "${value}".`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username || u.password) {
    throw invalid(`--doveadm-url must be http://host:port (or https://) of the doveadm HTTP API, without a path, e.g. http://127.0.0.1:8080; got "${u.protocol}//${u.host}${u.pathname}".`);
  }
  return u.origin;
}

/** The key as stored: the file's text without surrounding white space, one line. */
function checkDoveadmKey(value: string): string {
  const key = value.trim();
  if (!key) throw invalid('The doveadm key file is empty: it must hold the doveadm_api_key of that Dovecot.');
  if (/[\r\n]/.test(key)) throw invalid('The doveadm key file holds more than one line: it must hold only the doveadm_api_key of that Dovecot.');
  return key;
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

export class MailServersService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: MailServersOptions = {},
  ) {}

  /** Registers a mail server after asking its doveadm; the first one is the default. */
  async add(v: NewMailServer): Promise<MailServerView> {
    if (!NAME.test(v.name)) throw invalid(`"${v.name}" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. mx1.`);
    const doveadmUrl = checkDoveadmUrl(v.doveadmUrl);
    const smtp = checkHostPort('--smtp', v.smtp);
    const imap = checkHostPort('--imap', v.imap);
    const key = checkDoveadmKey(v.doveadmKey);
    if (await new MailServersRepository(this.db).byName(v.name)) throw this.taken(v.name);
    await this.checkDoveadm(doveadmUrl, key);
    try {
      return await this.db.transaction().execute(async (trx) => {
        // Two adds of the first server would both see "no default yet": one at a time.
        await serializeTransactions(trx, 'hostplane_mail_servers');
        const repo = new MailServersRepository(trx);
        if (await repo.byName(v.name)) throw this.taken(v.name);
        const first = !(await repo.defaultServer());
        await repo.add({ name: v.name, doveadm_url: doveadmUrl, doveadm_key: key, smtp, imap, is_default: 0, created_at: nowIso() });
        if (first || v.isDefault) await repo.setDefault(v.name);
        return mailServerView((await repo.byName(v.name))!);
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw this.taken(v.name);
      throw e;
    }
  }

  async list(): Promise<MailServerView[]> {
    return (await new MailServersRepository(this.db).list()).map(mailServerView);
  }

  /**
   * Forgets mail server `name`; nothing on the server itself changes. Refused while a package lives
   * there (its mailboxes are on that server; hostplane moves no package), and for the default while
   * there are others: packages without a server are placed on the default.
   */
  async remove(name: string): Promise<void> {
    await removeServer(this.db, name, { kind: 'mail', holds: 'e-mail addresses and mailboxes', lock: 'hostplane_mail_servers', repo: (trx) => new MailServersRepository(trx), notFound });
  }

  /** Makes `name` the default: packages without a mail server are placed there at their first address. */
  async setDefault(name: string): Promise<MailServerView> {
    return this.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, 'hostplane_mail_servers');
      const repo = new MailServersRepository(trx);
      if (!(await repo.byName(name))) throw notFound(name);
      await repo.setDefault(name);
      return mailServerView((await repo.byName(name))!);
    });
  }

  /**
   * Points mail server `name` at another doveadm URL or key (an older node's http://, a key file
   * made anew), after that doveadm answered with them as `add` checks; nothing changes when it did not.
   */
  async setDoveadm(name: string, v: MailServerDoveadm): Promise<MailServerView> {
    const doveadmUrl = checkDoveadmUrl(v.doveadmUrl);
    const key = checkDoveadmKey(v.doveadmKey);
    const repo = new MailServersRepository(this.db);
    if (!(await repo.byName(name))) throw notFound(name);
    await this.checkDoveadm(doveadmUrl, key);
    const row = await repo.setDoveadm(name, { doveadm_url: doveadmUrl, doveadm_key: key });
    if (!row) throw notFound(name); // removed while doveadm was asked
    return mailServerView(row);
  }

  /** Whether `name` is registered with this doveadm URL and key (as add and setDoveadm would store them); asks no doveadm. */
  async doveadmMatches(name: string, v: MailServerDoveadm): Promise<boolean> {
    const row = await new MailServersRepository(this.db).byName(name);
    if (!row) throw notFound(name);
    return row.doveadm_url === checkDoveadmUrl(v.doveadmUrl) && crypto.timingSafeEqual(digest(row.doveadm_key), digest(checkDoveadmKey(v.doveadmKey)));
  }

  /** GET /doveadm/v1 with the key: it answers (the key is right) and offers what the driver uses. */
  private async checkDoveadm(url: string, key: string): Promise<void> {
    let commands: string[];
    try {
      commands = await new DoveadmClient(url, key, { timeoutMs: this.options.timeoutMs ?? 10_000, ca: this.options.ca }).commands();
    } catch (e) {
      if (!(e instanceof DoveadmError)) throw e;
      if (e.status === 401 || e.status === 403) {
        throw invalid(`doveadm at ${url} refused the key from --doveadm-key-file (HTTP ${e.status}): give the file holding that Dovecot's doveadm_api_key.`);
      }
      throw new AppError('service_unavailable', `Cannot register the mail server: ${e.message}`);
    }
    const missing = DOVEADM_COMMANDS.filter((c) => !commands.includes(c));
    if (missing.length) {
      throw invalid(`doveadm at ${url} does not offer ${missing.join(', ')} over HTTP; hostplane needs Dovecot 2.3 with the doveadm HTTP API.`);
    }
  }

  private taken(name: string) {
    return new AppError('conflict', `A mail server named "${name}" exists already.`);
  }
}
