// All SQL of the registry of database servers (operator data). Rows carry the
// admin URL: callers that print or answer anything map them to a view without it first.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DatabaseServerConn } from './driver.js';

export type DatabaseServerRow = Selectable<Database['database_servers']>;
export type NewDatabaseServerRow = Insertable<Database['database_servers']>;

/** A registered server as the driver needs it: `driver.create(serverConn(row), spec)`. */
export const serverConn = (row: Pick<DatabaseServerRow, 'name' | 'url' | 'access_hosts'>): DatabaseServerConn => ({
  name: row.name,
  url: row.url,
  accessHosts: JSON.parse(row.access_hosts) as string[],
});

export class DatabaseServersRepository {
  constructor(readonly db: Kysely<Database>) {}

  async add(v: NewDatabaseServerRow): Promise<number> {
    return (await this.db.insertInto('database_servers').values(v).returning('id').executeTakeFirstOrThrow()).id;
  }

  list(): Promise<DatabaseServerRow[]> {
    return this.db.selectFrom('database_servers').selectAll().orderBy('db_type').orderBy('version').orderBy('name').execute();
  }

  byName(name: string): Promise<DatabaseServerRow | undefined> {
    return this.db.selectFrom('database_servers').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** The default server of one (db_type, version), if it has one. */
  defaultFor(dbType: string, version: string): Promise<DatabaseServerRow | undefined> {
    return this.db
      .selectFrom('database_servers')
      .selectAll()
      .where('db_type', '=', dbType as DatabaseServerRow['db_type'])
      .where('version', '=', version)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  }

  /**
   * Makes `name` the default of its (db_type, version) and clears the old default, in one
   * transaction (the caller's, if it is in one). The old one is cleared first: the partial unique
   * index refuses two defaults even for a moment.
   */
  async setDefault(name: string): Promise<void> {
    if (!this.db.isTransaction) return this.db.transaction().execute((trx) => new DatabaseServersRepository(trx).setDefault(name));
    const server = await this.byName(name);
    if (!server) return;
    await this.db
      .updateTable('database_servers')
      .set({ is_default: 0 })
      .where('db_type', '=', server.db_type)
      .where('version', '=', server.version)
      .where('name', '!=', name)
      .execute();
    await this.db.updateTable('database_servers').set({ is_default: 1 }).where('name', '=', name).execute();
  }

  async remove(name: string): Promise<void> {
    await this.db.deleteFrom('database_servers').where('name', '=', name).execute();
  }

  /** How many databases (in any state) live on server `name`. */
  async databasesOn(name: string): Promise<number> {
    const r = await this.db.selectFrom('databases').select((eb) => eb.fn.countAll<number>().as('n')).where('server_name', '=', name).executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
