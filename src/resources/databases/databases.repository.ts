// All SQL of customer databases (API guide "Databases"): scoped reads for the API (a database is
// visible when its customer is in the caller's scope, src/db/scope.ts), and the writes of the
// service and the job runs.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { DatabaseServerRow } from '../../provisioning/databases/servers.repository.js';
import type { Database, DatabasesTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import { lockedPackageRows } from '../../db/locks.js';
import { isPostgres } from '../../db/dialect.js';
import type { ObjectInsert } from '../../queue/queue.repository.js';
import { nextName } from './databases.rules.js';

export type DatabaseRow = Selectable<DatabasesTable>;

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface DatabaseFilters {
  packageIds?: number[];
  servers?: string[];
  dbTypes?: string[];
  versions?: string[];
}

export interface NewDatabase {
  customer_id: number;
  package_id: number;
  server_name: string;
  db_type: DatabaseRow['db_type'];
  version: string;
  name: string;
  description: string;
}

/** How a create names its database and how many the package may have (nextInsert). */
export interface Naming {
  /** Every name of the package begins with it (namePrefix); the database gets the next number after it. */
  prefix: string;
  /** The package's max_databases. */
  limit: number;
  /** The longest name allowed. */
  maxLength: number;
}

/** What a create reads of its package and plan. */
export interface PackageForCreate {
  id: number;
  customer_id: number;
  linux_user: string;
  max_databases: number;
  database_versions: string;
}

/** What the jobs of a database read of it (byIdWithServer). */
export type DatabaseForJob = Pick<DatabaseRow, 'id' | 'name' | 'state' | 'server_name'>;

/** A database and where its server is, as its jobs need them (null: the server is no longer registered). */
export interface DatabaseWithServer {
  row: DatabaseForJob;
  server: Pick<DatabaseServerRow, 'name' | 'url' | 'access_hosts'> | null;
}

/** A default server as a create needs it: to choose it, and to hand it to the create job (its URL and access hosts). */
export type DefaultServer = Pick<DatabaseServerRow, 'name' | 'db_type' | 'version' | 'url' | 'access_hosts'>;

/** A LIKE pattern (escape `!`) for the names that begin with `prefix`: SQLite has no default LIKE escape. */
const likePrefix = (prefix: string) => `${prefix.replace(/[!%_]/g, '!$&')}%`;

export class DatabasesRepository {
  /**
   * Pass a transaction for writes that belong together (database + job,
   * docs/decisions/0004-provisioning-seams.md).
   */
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('databases').selectAll('databases').where(visibleTo(actor, 'databases.customer_id'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('databases.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: DatabaseFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.packageIds) q = q.where('databases.package_id', 'in', f.packageIds);
    if (f.servers) q = q.where('databases.server_name', 'in', f.servers);
    if (f.dbTypes) q = q.where('databases.db_type', 'in', f.dbTypes as DatabaseRow['db_type'][]);
    if (f.versions) q = q.where('databases.version', 'in', f.versions);
    return fetchPage(q.orderBy('databases.id'), page);
  }

  byId(id: number) {
    return this.db.selectFrom('databases').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * A package of the caller's scope with what creating a database there needs (its plan's offer
   * and limit) and every default server (what POST /databases can place a database on), read
   * under the package lock (src/db/locks.ts): one statement on PostgreSQL. Undefined when the
   * package is not in the caller's scope.
   * `const found = await repo.lockPackageForCreate(actor, 42)` → `{ pkg, defaults }`.
   */
  async lockPackageForCreate(actor: Actor, id: number): Promise<{ pkg: PackageForCreate; defaults: DefaultServer[] } | undefined> {
    // One row per default server (one row with nulls when there is none), by db_type and version.
    const rows = await lockedPackageRows(
      this.db,
      id,
      this.db
        .selectFrom('packages')
        .innerJoin('plans', 'plans.id', 'packages.plan_id')
        .leftJoin('database_servers as s', (j) => j.on('s.is_default', '=', 1))
        .select(['packages.id', 'packages.customer_id', 'packages.linux_user', 'plans.max_databases', 'plans.database_versions'])
        .select(['s.name as server_name', 's.db_type as server_db_type', 's.version as server_version', 's.url as server_url', 's.access_hosts as server_access_hosts'])
        .where(visibleTo(actor, 'packages.customer_id'))
        .orderBy('s.db_type')
        .orderBy('s.version'),
    );
    if (!rows.length) return undefined;
    const { id: packageId, customer_id, linux_user, max_databases, database_versions } = rows[0];
    const defaults = rows.flatMap((r) =>
      r.server_name === null || r.server_db_type === null || r.server_version === null || r.server_url === null || r.server_access_hosts === null
        ? []
        : [{ name: r.server_name, db_type: r.server_db_type, version: r.server_version, url: r.server_url, access_hosts: r.server_access_hosts }],
    );
    return { pkg: { id: packageId, customer_id, linux_user, max_databases, database_versions }, defaults };
  }

  /**
   * What a create needs to know in one query: how many databases the package has in any state
   * (pending ones count against the limit), and the names on any server that begin with `prefix`
   * (`_` and `%` in it escaped: SQLite has no default LIKE escape). Names need only be unique per
   * server, but numbering over all servers keeps a package's databases apart for its customer
   * when the default server changes; two Linux users may share a prefix, hence not by package.
   */
  async countAndNames(packageId: number, prefix: string): Promise<{ count: number; names: string[] }> {
    const pattern = likePrefix(prefix);
    const rows = await this.db
      .selectFrom('databases')
      .select(['name', 'package_id'])
      .where((eb) => eb.or([eb('package_id', '=', packageId), sql<boolean>`${eb.ref('name')} like ${pattern} escape '!'`]))
      .execute();
    return { count: rows.filter((r) => r.package_id === packageId).length, names: rows.filter((r) => r.name.startsWith(prefix)).map((r) => r.name) };
  }

  /**
   * What the jobs of a database need of it and where its server is (null when that server is no
   * longer registered), in one query. Named columns, no `databases.*`: the statement is prepared
   * once per connection on PostgreSQL (src/db/index.ts withNamedStatements).
   */
  async byIdWithServer(id: number): Promise<DatabaseWithServer | undefined> {
    const r = await this.db
      .selectFrom('databases')
      .leftJoin('database_servers as s', 's.name', 'databases.server_name')
      .select(['databases.id', 'databases.name', 'databases.state', 'databases.server_name'])
      .select(['s.url as server_url', 's.access_hosts as server_access_hosts'])
      .where('databases.id', '=', id)
      .executeTakeFirst();
    if (!r) return undefined;
    const { server_url, server_access_hosts, ...row } = r;
    const server = server_url === null || server_access_hosts === null ? null : { name: row.server_name, url: server_url, access_hosts: server_access_hosts };
    return { row, server };
  }

  /**
   * The insert of the package's next database (nextName), or null when the package has
   * `naming.limit` databases already (in any state: pending ones count) or the next name is
   * longer than `naming.maxLength`; the queue runs it with the create job (enqueue.withObject).
   * Call it under the package's lock (lockPackageForCreate), which makes count and name hold until
   * the commit. A name taken on the same server meanwhile (a package of another Linux user with
   * the same prefix) fails with a unique violation.
   * - SQLite: count and names read first, then a plain insert.
   * - PostgreSQL: count and name computed inside the insert (one statement with the job): no row
   *   when the rules refuse, then countAndNames says why.
   */
  async nextInsert(d: Omit<NewDatabase, 'name'>, naming: Naming): Promise<ObjectInsert<DatabaseRow> | null> {
    if (isPostgres(this.db)) return this.nextInsertInSql(d, naming);
    const taken = await this.countAndNames(d.package_id, naming.prefix);
    const name = nextName(naming.prefix, taken.names);
    if (taken.count >= naming.limit || name.length > naming.maxLength) return null;
    return this.db.insertInto('databases').values({ ...d, name, state: 'pending', created_at: nowIso() }).returningAll();
  }

  /**
   * nextInsert on PostgreSQL: `taken` counts the package's databases and finds the next name by
   * nextName's rule (the highest number after the prefix among names that begin with it, plus
   * one); the row is inserted only if the rules allow. It must run after the statement that took
   * the package lock: its snapshot then has every create committed before.
   */
  private nextInsertInSql(d: Omit<NewDatabase, 'name'>, naming: Naming): ObjectInsert<DatabaseRow> {
    const pattern = likePrefix(naming.prefix);
    const from = naming.prefix.length + 1;
    const taken = this.db
      .selectFrom('databases')
      .select([
        sql<number>`count(*) filter (where package_id = ${d.package_id})`.as('n'),
        sql<string>`cast(${naming.prefix} as text) || cast(coalesce(max(cast(substr(name, ${from}) as numeric)) filter (where name like ${pattern} escape '!' and substr(name, ${from}) ~ '^[0-9]+$'), 0) + 1 as text)`.as('name'),
      ])
      .where((eb) => eb.or([eb('package_id', '=', d.package_id), sql<boolean>`${eb.ref('name')} like ${pattern} escape '!'`]))
      .as('taken');
    return this.db
      .insertInto('databases')
      .columns(['customer_id', 'package_id', 'server_name', 'db_type', 'version', 'description', 'state', 'created_at', 'name'])
      .expression((eb) =>
        eb
          .selectFrom(taken)
          .select([
            sql.val(d.customer_id).as('customer_id'),
            sql.val(d.package_id).as('package_id'),
            sql.val(d.server_name).as('server_name'),
            sql.val(d.db_type).as('db_type'),
            sql.val(d.version).as('version'),
            sql.val(d.description).as('description'),
            sql.val('pending').as('state'),
            sql.val(nowIso()).as('created_at'),
            'taken.name',
          ])
          .where('taken.n', '<', naming.limit)
          .where(sql`length(taken.name)`, '<=', naming.maxLength),
      )
      .returningAll();
  }

  /** Stores a pending database and answers its row. */
  insert(d: NewDatabase): Promise<DatabaseRow> {
    return this.db
      .insertInto('databases')
      .values({ ...d, state: 'pending', created_at: nowIso() })
      .returningAll()
      .executeTakeFirstOrThrow();
  }


  async setDescription(id: number, description: string) {
    await this.db.updateTable('databases').set({ description }).where('id', '=', id).execute();
  }

  /** Moves a database from one state to another; false when it was not in `from` (or is gone). */
  async transition(id: number, from: DatabaseRow['state'], to: DatabaseRow['state']) {
    const r = await this.db.updateTable('databases').set({ state: to }).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Marks the database being deleted, whatever its state but that one; true when this call did.
   * One statement: a job that moves the row meanwhile (pending → live) cannot make it miss.
   */
  async markDeleting(id: number): Promise<boolean> {
    const r = await this.db.updateTable('databases').set({ state: 'deleting' }).where('id', '=', id).where('state', '!=', 'deleting').executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Names of the live databases on `server`, for the usage refresh. */
  async liveNamesOn(server: string): Promise<string[]> {
    const rows = await this.db.selectFrom('databases').select('name').where('server_name', '=', server).where('state', '=', 'live').execute();
    return rows.map((r) => r.name);
  }

  /** Stores measured sizes (bytes by database name) of databases on `server`, measured at `at`. */
  async setUsage(server: string, usage: Map<string, number>, at: string): Promise<void> {
    for (const [name, bytes] of usage) {
      await this.db
        .updateTable('databases')
        .set({ usage_bytes: bytes, usage_updated_at: at })
        .where('server_name', '=', server)
        .where('name', '=', name)
        .execute();
    }
  }

  async delete(id: number) {
    await this.db.deleteFrom('databases').where('id', '=', id).execute();
  }
}
