// Rules of databases (API guide "Databases", "Queue jobs").
//
// Life of a database: POST stores it `pending` on the current default server of its (db_type,
// version) and enqueues a create job in one transaction; the job makes it `live` once the new
// credentials work. A password reset enqueues an update job; DELETE marks it `deleting` and
// enqueues a delete job that removes it from the server, then the row. Jobs on one database run in
// the order they were enqueued, so a DELETE right after POST waits for the create and then wins.
//
// The plaintext password exists only in the answer: the job carries the mysql_native_password
// hash, and no table holds either.
import type { Actor } from '../../auth/actor.js';
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { AppError, invalidField, limitReached, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues, parseNumericId } from '../../db/ids.js';
import { withJobs } from '../../queue/enqueue.js';
import type { ServiceDeps } from '../service-deps.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { generateDatabasePassword, nativePasswordHash } from '../../provisioning/databases/password.js';
import { DatabasesRepository, type DatabaseRow, type DatabaseWithServer, type DefaultServer } from './databases.repository.js';
import type { DatabaseJobPayload } from './databases.jobs.js';
import { NAME_MAX, namePrefix } from './databases.rules.js';
import { findChecked, type Precondition } from '../../db/locks.js';

export interface DatabaseCreateInput {
  package_id: string;
  db_type: string;
  version: string;
  description?: string | null;
}

/** A write that generated a password: the row as the write left it, its job, the one-time password. */
export interface DatabaseWithPassword {
  row: DatabaseRow;
  job: QueueJobRow;
  password: string;
}


/** `mariadb-10.11` as the plan lists it. */
const offerKey = (dbType: string, version: string) => `${dbType}-${version}`;

/**
 * The default server for the requested combination among `defaults`, if the plan lists it; else
 * 422 naming what the package can create.
 */
function offeredServer(defaults: DefaultServer[], planVersions: string, input: DatabaseCreateInput): DefaultServer {
  const listed = JSON.parse(planVersions) as string[];
  const offered = defaults.filter((s) => listed.includes(offerKey(s.db_type, s.version)));
  const match = offered.find((s) => s.db_type === input.db_type && s.version === input.version);
  if (match) return match;
  const field = offered.some((s) => s.db_type === input.db_type) ? 'version' : 'db_type';
  const can = offered.map((s) => `${s.db_type} ${s.version}`);
  const detail = can.length
    ? `This package can create ${can.join(', ')} databases (db_type and version).`
    : 'This package cannot create databases: its plan offers no database version that a server provides.';
  throw invalidField(field, `${input.db_type} ${input.version} is not available. ${detail}`);
}

/** Concurrent creates in packages whose names collide on one server: the loser tries again. */
const NAME_ATTEMPTS = 3;

export class DatabasesService {
  private readonly store: Store;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
  }

  private get repo() {
    return new DatabasesRepository(this.store.db);
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<DatabaseRow>> {
    const packageIds = idValues(filters.package_id);
    if (packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { packageIds, servers: filters.server, dbTypes: filters.db_type, versions: filters.version }, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('database', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * Stores a pending database on the default server of its (db_type, version) and its create job;
   * only combinations the package's plan lists and that have a default server can be created
   * (422 naming them), up to the plan's `max_databases` (409). The package row is locked first,
   * so parallel creates in one package count one after the other.
   */
  async create(actor: Actor, input: DatabaseCreateInput): Promise<DatabaseWithPassword> {
    const packageId = parseNumericId(input.package_id);
    if (packageId === null) throw notFound('package');
    const password = generateDatabasePassword();
    const payload: DatabaseJobPayload = { passwordHash: nativePasswordHash(password) };
    for (let attempt = 1; ; attempt++) {
      try {
        const { row, job } = await withJobs(this.store, async (trx, enqueue) => {
          const repo = new DatabasesRepository(trx);
          // Package, plan and default servers in one statement that also takes the package lock.
          const found = await repo.lockPackageForCreate(actor, packageId);
          if (!found) throw notFound('package');
          const { pkg } = found;
          const server = offeredServer(found.defaults, pkg.database_versions, input);
          const database = {
            customer_id: pkg.customer_id,
            package_id: pkg.id,
            server_name: server.name,
            db_type: server.db_type,
            version: server.version,
            description: input.description ?? '',
          };
          const naming = { prefix: namePrefix(pkg.linux_user), limit: pkg.max_databases, maxLength: NAME_MAX };
          const insert = await repo.nextInsert(database, naming);
          const job = { customerId: pkg.customer_id, jobType: 'database', action: 'create', objectId: null, payload, fresh: true } as const;
          // The job's run at commit gets what this transaction wrote (no read back, databases.jobs.ts).
          const created =
            insert &&
            (await enqueue.withObject(job, insert, (row): DatabaseWithServer => ({
              row: { id: row.id, name: row.name, state: row.state, server_name: row.server_name },
              server: { name: server.name, url: server.url, access_hosts: server.access_hosts },
            })));
          if (!created) {
            const { count } = await repo.countAndNames(pkg.id, naming.prefix);
            if (count < pkg.max_databases) throw limitReached('No database name is left for this package.');
            throw limitReached(
              `This package has reached its limit of ${pkg.max_databases} database${pkg.max_databases === 1 ? '' : 's'} (max_databases of its plan).`,
            );
          }
          return { row: created.row, job: created.job };
        }, actor);
        return { row, job, password };
      } catch (e) {
        if (!isUniqueViolation(e) || attempt >= NAME_ATTEMPTS) throw e;
      }
    }
  }

  /**
   * Sets the description (null stores ""); answers the database as this write left it. A
   * `precondition` (API guide "Safe retries") is checked on the database as it is, locked.
   */
  async update(actor: Actor, id: string, attrs: { description?: string | null }, precondition?: Precondition<DatabaseRow>): Promise<DatabaseRow> {
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DatabasesRepository(trx);
      const row = await this.current(trx, actor, id, precondition);
      if (attrs.description !== undefined) await repo.setDescription(row.id, attrs.description ?? '');
      return (await repo.byId(row.id))!;
    });
  }

  /** A new password and the job that sets it; 409 while the database is being deleted. */
  async resetPassword(actor: Actor, id: string): Promise<DatabaseWithPassword> {
    const password = generateDatabasePassword();
    const payload: DatabaseJobPayload = { passwordHash: nativePasswordHash(password) };
    const { row, job } = await withJobs(this.store, async (trx, enqueue) => {
      const row = await findOr404('database', id, (n) => new DatabasesRepository(trx).findVisible(actor, n));
      if (row.state === 'deleting') throw new AppError('invalid_state', 'This database is being deleted.');
      const job = await enqueue({ customerId: row.customer_id, jobType: 'database', action: 'update', objectId: String(row.id), payload });
      return { row, job };
    }, actor);
    return { row, job, password };
  }

  /**
   * Marks the database `deleting` and enqueues its delete job; returns the job. A database already
   * being deleted answers with its pending delete job, so a repeated DELETE is harmless.
   */
  async delete(actor: Actor, id: string, precondition?: Precondition<DatabaseRow>): Promise<QueueJobRow> {
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new DatabasesRepository(trx);
      const row = await this.current(trx, actor, id, precondition);
      // Marked whatever its state now: the create job may have made it live since it was read.
      const underway = !(await repo.markDeleting(row.id));
      const job = { customerId: row.customer_id, jobType: 'database', action: 'delete', objectId: String(row.id), payload: {} } as const;
      return enqueue.unlessStanding(underway, job, () => enqueue(job));
    }, actor);
  }

  /** The database a write changes, read in its transaction `trx`; checked by a precondition, under its row lock. */
  private current(trx: Kysely<Database>, actor: Actor, id: string, precondition: Precondition<DatabaseRow> | undefined) {
    return findChecked(trx, precondition, 'databases', 'database', id, (n) => new DatabasesRepository(trx).findVisible(actor, n));
  }
}
