// The registry of web servers (docs/decisions/0008-web-servers.md): operator data,
// written by `hostplane admin web-server …`. The first server becomes the default; packages that
// name no web server are placed on the default at their first subdomain (API guide "Subdomains").
// Nothing is asked of the server here: its Caddy admin API listens on the web host's loopback,
// which the operator's machine need not reach; the web host's worker reports what it cannot do.
import net from 'node:net';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation, serializeTransactions } from '../db/dialect.js';
import { AppError } from '../errors.js';
import { PHP_VERSIONS } from '../php-versions.js';
import { removeServer } from './server-registry.js';
import { WebServersRepository, sftpHostOf, type WebServerRow } from '../provisioning/web/servers.repository.js';

export interface NewWebServer {
  name: string;
  /** http://127.0.0.1:2019 */
  caddyAdmin: string;
  httpListen: string;
  httpsListen?: string | null;
  addresses: string[];
  homeRoot: string;
  /** Default `<homeRoot>/.hostplane`. */
  stateDir?: string;
  /** `8.2=/usr/sbin/php-fpm8.2` entries. */
  php?: string[];
  /** Caddy's group, when Caddy runs as another user than the web worker: it may then connect to the PHP sockets. */
  socketGroup?: string | null;
  isDefault?: boolean;
  /** Where customers connect for SFTP (API guide "SSH keys"); default: the first of `addresses`. */
  sftpHost?: string | null;
  /** sshd's port there [22]. */
  sftpPort?: number;
}

/** What is shown of a web server (list, --json). */
export type WebServerView = {
  id: string;
  name: string;
  caddy_admin: string;
  http_listen: string;
  https_listen: string | null;
  addresses: string[];
  home_root: string;
  state_dir: string;
  php: Record<string, string>;
  socket_group: string | null;
  default: boolean;
  /** The host customers connect to for SFTP: the one given, else the first address. */
  sftp_host: string;
  sftp_port: number;
  created_at: string;
};

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
// An empty host (`:80`) is every address, IPv4 and IPv6, as Caddy reads it.
const LISTEN = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):([0-9]{1,5})$/;

const invalid = (detail: string) => new AppError('invalid_api_data', detail);
const notFound = (name: string) => new AppError('resource_not_found', `No web server is named "${name}".`);


export function webServerView(row: WebServerRow): WebServerView {
  return {
    id: String(row.id),
    name: row.name,
    caddy_admin: row.caddy_admin,
    http_listen: row.http_listen,
    https_listen: row.https_listen,
    addresses: JSON.parse(row.addresses) as string[],
    home_root: row.home_root,
    state_dir: row.state_dir,
    php: JSON.parse(row.php) as Record<string, string>,
    socket_group: row.socket_group,
    default: row.is_default === 1,
    sftp_host: sftpHostOf(row),
    sftp_port: row.sftp_port,
    created_at: row.created_at,
  };
}


// A host name (letters, digits, '-', dots) or an IP address: what `sftp -P <port> <user>@<host>` takes.
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

function checkSftp(v: { sftpHost?: string | null; sftpPort?: number }): { host: string | null | undefined; port: number | undefined } {
  if (v.sftpHost != null && !net.isIP(v.sftpHost) && !HOST_NAME.test(v.sftpHost)) {
    throw invalid(`--sftp-host takes a host name or an IP address, e.g. web1.example.net; got "${v.sftpHost}".`);
  }
  if (v.sftpPort !== undefined && (!Number.isInteger(v.sftpPort) || v.sftpPort < 1 || v.sftpPort > 65535)) {
    throw invalid(`--sftp-port takes a port from 1 to 65535; got ${v.sftpPort}.`);
  }
  return { host: v.sftpHost === undefined ? undefined : v.sftpHost?.replace(/\.$/, '') || null, port: v.sftpPort };
}

function checkListen(option: string, value: string): string {
  const m = LISTEN.exec(value);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw invalid(`${option} must be host:port, e.g. 0.0.0.0:80, [::]:443 or :443 (every address); got "${value}".`);
  return value;
}

function checkPhp(entries: string[]): Record<string, string> {
  const php: Record<string, string> = {};
  for (const entry of entries) {
    const m = /^([0-9]+\.[0-9]+)=(\/.+)$/.exec(entry);
    if (!m) throw invalid(`--php takes <version>=<php-fpm binary>, e.g. 8.2=/usr/sbin/php-fpm8.2; got "${entry}".`);
    if (!(PHP_VERSIONS as readonly string[]).includes(m[1])) throw invalid(`PHP ${m[1]} is not one of ${PHP_VERSIONS.join(', ')}.`);
    if (php[m[1]]) throw invalid(`PHP ${m[1]} is given twice.`);
    php[m[1]] = m[2];
  }
  return php;
}

export class WebServersService {
  constructor(private readonly db: Kysely<Database>) {}

  /** Registers a web server; the first one is the default. */
  async add(v: NewWebServer): Promise<WebServerView> {
    if (!NAME.test(v.name)) throw invalid(`"${v.name}" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. web1.`);
    let admin: URL;
    try {
      admin = new URL(v.caddyAdmin);
    } catch {
      throw invalid(`--caddy-admin must be the URL of Caddy's admin API, e.g. http://127.0.0.1:2019; got "${v.caddyAdmin}".`);
    }
    if (admin.protocol !== 'http:' || (admin.pathname !== '/' && admin.pathname !== '') || admin.search || admin.username) {
      throw invalid(`--caddy-admin must be http://host:port of Caddy's admin API, e.g. http://127.0.0.1:2019; got "${v.caddyAdmin}".`);
    }
    const httpListen = checkListen('--http-listen', v.httpListen);
    const httpsListen = v.httpsListen ? checkListen('--https-listen', v.httpsListen) : null;
    if (!v.addresses.length) throw invalid('Give at least one --address: the IP address(es) DNS serves for the sites.');
    for (const a of v.addresses) if (!net.isIP(a)) throw invalid(`--address takes IP addresses; "${a}" is not one.`);
    if (!path.isAbsolute(v.homeRoot)) throw invalid(`--home-root must be an absolute directory; got "${v.homeRoot}".`);
    const stateDir = v.stateDir ?? path.join(v.homeRoot, '.hostplane');
    if (!path.isAbsolute(stateDir)) throw invalid(`--state-dir must be an absolute directory; got "${stateDir}".`);
    const php = checkPhp(v.php ?? []);
    if (v.socketGroup && !/^[a-z_][a-z0-9_-]{0,31}$/.test(v.socketGroup)) throw invalid(`--socket-group takes a group name, e.g. caddy; got "${v.socketGroup}".`);
    const sftp = checkSftp(v);
    return this.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, 'hostplane_web_servers');
      const repo = new WebServersRepository(trx);
      if (await repo.byName(v.name)) throw new AppError('conflict', `A web server named "${v.name}" exists already.`);
      const first = !(await repo.defaultServer());
      try {
        const row = await repo.add({
          name: v.name,
          caddy_admin: admin.origin,
          http_listen: httpListen,
          https_listen: httpsListen,
          addresses: JSON.stringify(v.addresses),
          home_root: path.resolve(v.homeRoot),
          state_dir: path.resolve(stateDir),
          php: JSON.stringify(php),
          socket_group: v.socketGroup ?? null,
          is_default: 0,
          created_at: nowIso(),
          sftp_host: sftp.host ?? null,
          sftp_port: sftp.port ?? 22,
        });
        if (first || v.isDefault) await repo.setDefault(row.name);
        return webServerView((await repo.byName(row.name))!);
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('conflict', `A web server named "${v.name}" exists already.`);
        throw e;
      }
    });
  }

  async list(): Promise<WebServerView[]> {
    return (await new WebServersRepository(this.db).list()).map(webServerView);
  }

  /**
   * Forgets web server `name`; nothing on the server itself changes. Refused while a package lives
   * there (its sites and files are on that server; hostplane moves no package), and for the default
   * while there are others: packages without a server are placed on the default.
   */
  async remove(name: string): Promise<void> {
    await removeServer(this.db, name, { kind: 'web', holds: 'sites and files', lock: 'hostplane_web_servers', repo: (trx) => new WebServersRepository(trx), notFound });
  }

  /**
   * Where customers connect for SFTP to web server `name` (`hostplane admin web-server set`): a null
   * host goes back to the first address. Packages on it show the new values at once.
   */
  async setSftp(name: string, v: { sftpHost?: string | null; sftpPort?: number }): Promise<WebServerView> {
    const sftp = checkSftp(v);
    return this.db.transaction().execute(async (trx) => {
      const repo = new WebServersRepository(trx);
      if (!(await repo.byName(name))) throw notFound(name);
      await repo.setSftp(name, { ...(sftp.host !== undefined ? { sftp_host: sftp.host } : {}), ...(sftp.port !== undefined ? { sftp_port: sftp.port } : {}) });
      return webServerView((await repo.byName(name))!);
    });
  }

  /** Makes `name` the default: packages that name no web server are placed there at their first subdomain. */
  async setDefault(name: string): Promise<WebServerView> {
    return this.db.transaction().execute(async (trx) => {
      await serializeTransactions(trx, 'hostplane_web_servers');
      const repo = new WebServersRepository(trx);
      if (!(await repo.byName(name))) throw notFound(name);
      await repo.setDefault(name);
      return webServerView((await repo.byName(name))!);
    });
  }
}
