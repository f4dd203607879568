// All SQL of the registry of web servers (operator data; docs/decisions/0008-web-servers.md), and
// the conversion of a row to what the web driver needs.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { WebServerConn } from './sites.js';

/** The named queue of the jobs that must run on web server `name`'s host (`hostplane worker --web-server name`). */
export const webQueue = (name: string) => `web:${name}`;

export type WebServerRow = Selectable<Database['web_servers']>;
export type NewWebServerRow = Insertable<Database['web_servers']>;

/** A registered web server as the driver needs it: `caddy.ensure(webServerConn(row), …)`. */
export const webServerConn = (row: WebServerRow): WebServerConn => ({
  name: row.name,
  caddyAdmin: row.caddy_admin,
  httpListen: row.http_listen,
  httpsListen: row.https_listen,
  homeRoot: row.home_root,
  stateDir: row.state_dir,
  php: JSON.parse(row.php) as Record<string, string>,
  socketGroup: row.socket_group,
});

/** The SFTP host of a web server (API guide "SSH keys"): the one registered, else its first address (what DNS serves for its sites). */
export const sftpHostOf = (row: Pick<WebServerRow, 'sftp_host' | 'addresses'>): string => row.sftp_host ?? (JSON.parse(row.addresses) as string[])[0];

export class WebServersRepository {
  constructor(readonly db: Kysely<Database>) {}

  async add(v: NewWebServerRow): Promise<WebServerRow> {
    return this.db.insertInto('web_servers').values(v).returningAll().executeTakeFirstOrThrow();
  }

  list(): Promise<WebServerRow[]> {
    return this.db.selectFrom('web_servers').selectAll().orderBy('name').execute();
  }

  byName(name: string): Promise<WebServerRow | undefined> {
    return this.db.selectFrom('web_servers').selectAll().where('name', '=', name).executeTakeFirst();
  }

  defaultServer(): Promise<WebServerRow | undefined> {
    return this.db.selectFrom('web_servers').selectAll().where('is_default', '=', 1).executeTakeFirst();
  }

  /** Makes `name` the default (the old one cleared first: the partial unique index allows one). In the caller's transaction. */
  async setDefault(name: string): Promise<void> {
    await this.db.updateTable('web_servers').set({ is_default: 0 }).where('is_default', '=', 1).where('name', '!=', name).execute();
    await this.db.updateTable('web_servers').set({ is_default: 1 }).where('name', '=', name).execute();
  }

  /** The ids of the packages placed on server `name` (their sites and files are there), in id order. */
  async packagesOn(name: string): Promise<number[]> {
    const rows = await this.db.selectFrom('packages').select('id').where('web_server_name', '=', name).orderBy('id').execute();
    return rows.map((r) => r.id);
  }

  async setSftp(name: string, v: { sftp_host?: string | null; sftp_port?: number }): Promise<void> {
    if (Object.keys(v).length) await this.db.updateTable('web_servers').set(v).where('name', '=', name).execute();
  }

  async remove(name: string): Promise<void> {
    await this.db.deleteFrom('web_servers').where('name', '=', name).execute();
  }
}
