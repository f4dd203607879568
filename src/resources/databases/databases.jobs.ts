// Jobs of databases (API guide "Queue jobs", "Databases"): create, update (a new password), delete.
// Each is done only when the server shows the change, and every step converges, so a run killed
// anywhere and run again ends in the same state. A job that finds its database being deleted is
// done: the delete, queued behind it, wins.
import { Type, type Static } from 'typebox';
import { defineJob, DONE, objectIdOf, PermanentJobError, type JobContext } from '../job-contract.js';
import type { DatabaseServerConn } from '../../provisioning/databases/driver.js';
import { serverConn } from '../../provisioning/databases/servers.repository.js';
import { refreshDatabaseUsage } from './databases.usage.js';
import { usageRefreshJob } from '../../queue/usage-refresh.js';
import { DatabasesRepository, type DatabaseForJob, type DatabaseWithServer } from './databases.repository.js';

/** What create and password jobs carry: the mysql_native_password hash, never the password. */
export const DatabaseJobPayload = Type.Object({ passwordHash: Type.String({ pattern: '^\\*[0-9A-F]{40}$' }) });
export type DatabaseJobPayload = Static<typeof DatabaseJobPayload>;


/**
 * The job's database row (undefined when it is gone) and, lazily, the server it lives on. A fresh
 * create has both from the POST's transaction and reads nothing (decision 0010).
 */
async function databaseOf(ctx: JobContext<unknown>) {
  const id = objectIdOf(ctx.job);
  const repo = new DatabasesRepository(ctx.store.db);
  const handed = ctx.prefetched as DatabaseWithServer | undefined;
  const found = handed?.row.id === id ? handed : await repo.byIdWithServer(id);
  const server = (): DatabaseServerConn => {
    if (!found?.server) throw new PermanentJobError(`database server ${found?.row.server_name} is not registered`);
    return serverConn(found.server);
  };
  return { repo, id, row: found?.row, server };
}

/** Fails the run (to be retried) unless the server shows the database with this password. */
async function checkCreated(ctx: JobContext<DatabaseJobPayload>, server: DatabaseServerConn, row: DatabaseForJob): Promise<void> {
  if (!(await ctx.drivers.databases.isCreated(server, { name: row.name, passwordHash: ctx.payload.passwordHash }))) {
    throw new Error(`database ${row.name} on ${server.name} does not show the change yet`);
  }
}

export const createDatabaseJob = defineJob({
  type: 'database',
  action: 'create',
  payload: DatabaseJobPayload,
  run: async (ctx) => {
    const { repo, id, row, server: serverOf } = await databaseOf(ctx);
    if (!row || row.state === 'deleting') return DONE;
    const server = serverOf();
    await ctx.drivers.databases.create(server, { name: row.name, passwordHash: ctx.payload.passwordHash });
    await checkCreated(ctx, server, row);
    await repo.transition(id, 'pending', 'live');
    return DONE;
  },
});

/**
 * A new password. A database whose create job failed for good is still `pending`: it is created
 * here with the new password (create converges), so a reset also repairs it.
 */
export const updateDatabaseJob = defineJob({
  type: 'database',
  action: 'update',
  payload: DatabaseJobPayload,
  run: async (ctx) => {
    const { repo, id, row, server: serverOf } = await databaseOf(ctx);
    if (!row || row.state === 'deleting') return DONE;
    const server = serverOf();
    const spec = { name: row.name, passwordHash: ctx.payload.passwordHash };
    if (row.state === 'pending') await ctx.drivers.databases.create(server, spec);
    else await ctx.drivers.databases.setPassword(server, spec);
    await checkCreated(ctx, server, row);
    await repo.transition(id, 'pending', 'live');
    return DONE;
  },
});

/** Database and user go from the server; the row goes only once the server shows neither. */
export const deleteDatabaseJob = defineJob({
  type: 'database',
  action: 'delete',
  payload: Type.Object({}),
  run: async (ctx) => {
    const { repo, id, row, server: serverOf } = await databaseOf(ctx);
    if (!row) return DONE;
    const server = serverOf();
    await ctx.drivers.databases.drop(server, { name: row.name });
    if (!(await ctx.drivers.databases.isDropped(server, { name: row.name }))) {
      throw new Error(`database ${row.name} on ${server.name} is not gone yet`);
    }
    await repo.delete(id);
    return DONE;
  },
});

/** Measures every live database once a day. */
export const refreshUsageJob = usageRefreshJob('database', (ctx: JobContext) => refreshDatabaseUsage(ctx.store, ctx.drivers.databases));

export const DATABASE_JOBS = [createDatabaseJob, updateDatabaseJob, deleteDatabaseJob, refreshUsageJob];
