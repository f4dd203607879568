// The registry of database servers (API guide "Databases"): operator data, written by `hostplane
// admin database-server …`. Rules: one default per (db_type, version) — the first server of a pair
// becomes it —, a dedicated server is never the default (the API never places databases on it), a
// server is registered only after it answered and said it is what the operator claims, and it is
// removed only while no database lives on it. The admin URL is stored (the driver connects with it)
// and never leaves this module: every answer is a `DatabaseServerView`.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation, serializeTransactions } from '../db/dialect.js';
import { AppError } from '../errors.js';
import { hostPort } from '../host-port.js';
import { DatabaseServersRepository, type DatabaseServerRow } from '../provisioning/databases/servers.repository.js';
import { ProbeError, probeServer, type ProbeResult, type ServerAddress } from '../provisioning/databases/probe.js';

export const DB_TYPES = ['mariadb', 'mysql'] as const;
export type DbType = (typeof DB_TYPES)[number];

export interface NewDatabaseServer {
  name: string;
  dbType: DbType;
  /** major.minor, e.g. `10.11`. */
  version: string;
  /** `mysql://admin[:password]@host[:port]`. */
  url: string;
  /** The admin password when the URL has none (`--password-stdin`). */
  password?: string;
  /** MySQL host patterns of the customers' accounts; `["%"]` unless given. */
  accessHosts?: string[];
  isDefault?: boolean;
  isDedicated?: boolean;
}

export interface DatabaseServersOptions {
  /**
   * Test-only (HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH=1): register a server whose flavour or version
   * differs from what it says it is — MySQL cannot be installed on the test machines, so the suites
   * label a MariaDB as `mysql`. Never set it in production.
   */
  allowLabelMismatch?: boolean;
}

/** What may be shown of a server: where it is and as whom, never the password. */
export type DatabaseServerView = {
  id: string;
  name: string;
  db_type: DbType;
  version: string;
  /** host:port */
  host: string;
  admin_user: string;
  access_hosts: string[];
  default: boolean;
  dedicated: boolean;
  created_at: string;
};

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
const VERSION = /^\d{1,3}\.\d{1,3}$/;
// What MySQL accepts in the host part of an account that an operator would write: names,
// addresses, `%`/`_` wildcards, IPv6 and netmasks (10.0.0.0/255.255.255.0).
const ACCESS_HOST = /^[A-Za-z0-9.%_:/-]{1,255}$/;
const DEFAULT_PORT = 3306;

const invalid = (detail: string) => new AppError('invalid_api_data', detail);
const notFound = (name: string) => new AppError('resource_not_found', `No database server is named "${name}".`);

/** Where the URL points and as whom, with the password; never echoes the URL (it may hold the password). */
export function parseServerUrl(url: string, password?: string): ServerAddress {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalid('The server URL must look like mysql://admin@host:port.');
  }
  if (u.protocol !== 'mysql:') throw invalid('The server URL must start with mysql://, e.g. mysql://admin@host:3306.');
  if (!u.username) throw invalid('The server URL must name the admin user: mysql://admin@host:port.');
  if (!u.hostname) throw invalid('The server URL must name the host: mysql://admin@host:port.');
  if ((u.pathname && u.pathname !== '/') || u.search || u.hash) {
    throw invalid('The server URL names a server, not a database: give only mysql://admin@host:port.');
  }
  if (u.password && password !== undefined) throw invalid('Give the admin password either in the URL or on stdin, not both.');
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : DEFAULT_PORT,
    user: decodeURIComponent(u.username),
    password: password ?? decodeURIComponent(u.password),
  };
}

/** The URL as stored: every part normalised, the password included (the driver needs it). */
function storedUrl(a: ServerAddress): string {
  const auth = a.password ? `${encodeURIComponent(a.user)}:${encodeURIComponent(a.password)}` : encodeURIComponent(a.user);
  return `mysql://${auth}@${hostPort(a.host, a.port)}`;
}

/** A stored server as it may be shown (list, --json, answers). */
export function serverView(row: DatabaseServerRow): DatabaseServerView {
  const a = parseServerUrl(row.url);
  return {
    id: String(row.id),
    name: row.name,
    db_type: row.db_type,
    version: row.version,
    host: hostPort(a.host, a.port),
    admin_user: a.user,
    access_hosts: JSON.parse(row.access_hosts) as string[],
    default: row.is_default === 1,
    dedicated: row.is_dedicated === 1,
    created_at: row.created_at,
  };
}

export class DatabaseServersService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: DatabaseServersOptions = {},
  ) {}

  /**
   * Registers a server as the flavour and major.minor it reports (the demo dataset's server):
   * `await servers.addAsItIs({ name: 'demo-db', url, isDefault: true })`.
   */
  async addAsItIs(v: Omit<NewDatabaseServer, 'dbType' | 'version'>): Promise<{ server: DatabaseServerView; warnings: string[] }> {
    let probed: ProbeResult;
    try {
      probed = await probeServer(parseServerUrl(v.url, v.password));
    } catch (e) {
      if (e instanceof ProbeError) throw new AppError('service_unavailable', e.message);
      throw e;
    }
    return this.add({ ...v, dbType: probed.flavour, version: probed.version });
  }

  /**
   * Registers a server after asking it what it is. Returns it and the warnings for the operator
   * (an anonymous account that shadows customers' `user@'%'`, a test-only label mismatch).
   */
  async add(v: NewDatabaseServer): Promise<{ server: DatabaseServerView; warnings: string[] }> {
    const address = this.check(v);
    if (await new DatabaseServersRepository(this.db).byName(v.name)) throw this.taken(v.name);
    let probed: ProbeResult;
    try {
      probed = await probeServer(address);
    } catch (e) {
      if (e instanceof ProbeError) throw new AppError('service_unavailable', e.message);
      throw e;
    }
    const warnings = this.labelWarnings(v, address, probed);
    if (probed.anonymousAccounts === null) {
      warnings.push(`Could not check ${address.host}:${address.port} for anonymous accounts: ${address.user} may not read mysql.user.`);
    } else if (probed.anonymousAccounts.length) {
      warnings.push(
        `${address.host}:${address.port} has anonymous accounts (${probed.anonymousAccounts.join(', ')}); ` +
          `one on localhost takes precedence over a customer's user@'%' for clients on that host, so their logins fail. ` +
          `Remove them (DROP USER ''@'localhost';) unless you need them.`,
      );
    }
    const accessHosts = [...new Set(v.accessHosts?.length ? v.accessHosts : ['%'])];
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        // Two adds of the first server of a pair would both see "no default yet": one at a time.
        await serializeTransactions(trx, 'hostplane_database_servers');
        const repo = new DatabaseServersRepository(trx);
        const isDefault = !v.isDedicated && (v.isDefault === true || !(await repo.defaultFor(v.dbType, v.version)));
        await repo.add({
          name: v.name, db_type: v.dbType, version: v.version, url: storedUrl(address), access_hosts: JSON.stringify(accessHosts),
          is_default: 0, is_dedicated: v.isDedicated ? 1 : 0, created_at: nowIso(),
        });
        if (isDefault) await repo.setDefault(v.name);
        return (await repo.byName(v.name))!;
      });
      return { server: serverView(row), warnings };
    } catch (e) {
      if (isUniqueViolation(e)) throw this.taken(v.name);
      throw e;
    }
  }

  async list(): Promise<DatabaseServerView[]> {
    return (await new DatabaseServersRepository(this.db).list()).map(serverView);
  }

  async byName(name: string): Promise<DatabaseServerView> {
    const row = await new DatabaseServersRepository(this.db).byName(name);
    if (!row) throw notFound(name);
    return serverView(row);
  }

  /** Makes `name` the default of its (db_type, version); new databases go there, existing ones stay. */
  async setDefault(name: string): Promise<DatabaseServerView> {
    return this.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, 'hostplane_database_servers');
      const repo = new DatabaseServersRepository(trx);
      const row = await repo.byName(name);
      if (!row) throw notFound(name);
      if (row.is_dedicated) throw new AppError('invalid_state', `${name} is a dedicated server: it is never the default.`);
      await repo.setDefault(name);
      return serverView((await repo.byName(name))!);
    });
  }

  /**
   * Removes a server no database lives on. The default of a pair that has other (non-dedicated)
   * servers stays until another is made the default: a pair with servers always has one.
   */
  async remove(name: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, 'hostplane_database_servers');
      const repo = new DatabaseServersRepository(trx);
      const row = await repo.byName(name);
      if (!row) throw notFound(name);
      const n = await repo.databasesOn(name);
      if (n) throw new AppError('invalid_state', `${n} database${n === 1 ? ' lives' : 's live'} on ${name}; delete ${n === 1 ? 'it' : 'them'} first.`);
      if (row.is_default) {
        const others = (await repo.list()).filter((s) => s.name !== name && s.db_type === row.db_type && s.version === row.version && !s.is_dedicated);
        if (others.length) {
          throw new AppError(
            'invalid_state',
            `${name} is the default for ${row.db_type} ${row.version}; make another server the default first (${others.map((s) => s.name).join(', ')}).`,
          );
        }
      }
      await repo.remove(name);
    });
  }

  /** Every rule that needs no server; the parsed URL. */
  private check(v: NewDatabaseServer): ServerAddress {
    if (!NAME.test(v.name)) {
      throw invalid(`"${v.name}" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. db22.`);
    }
    if (!DB_TYPES.includes(v.dbType)) throw invalid(`The database type must be one of ${DB_TYPES.join(', ')}.`);
    if (!VERSION.test(v.version)) throw invalid(`"${v.version}" is not a version: give major.minor, e.g. 10.11.`);
    for (const h of v.accessHosts ?? []) {
      if (!ACCESS_HOST.test(h)) throw invalid(`"${h}" is not an access host: give a host name, an address or a pattern such as % or 10.0.0.%.`);
    }
    if (v.isDefault && v.isDedicated) throw invalid('A dedicated server is never the default: give --default or --dedicated, not both.');
    return parseServerUrl(v.url, v.password);
  }

  /** The server must be what the operator says it is; the test-only override turns that into a warning. */
  private labelWarnings(v: NewDatabaseServer, a: ServerAddress, p: ProbeResult): string[] {
    if (p.flavour === v.dbType && p.version === v.version) return [];
    const what = `${a.host}:${a.port} is ${p.flavour} ${p.version} (${p.versionString}), not ${v.dbType} ${v.version}`;
    if (!this.options.allowLabelMismatch) {
      throw invalid(`${what}; register it with --db-type ${p.flavour} --db-version ${p.version}.`);
    }
    return [`${what}; registered as ${v.dbType} ${v.version} anyway (HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH, for tests only).`];
  }

  private taken(name: string) {
    return new AppError('conflict', `A database server named "${name}" exists already.`);
  }
}
