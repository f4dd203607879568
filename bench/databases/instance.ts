// A hostplane instance of the database bench, of this checkout or of another (BENCH_COMPARE): an
// app and a worker on the engine's store, and a database driver that marks when each step ran.
import type { FastifyInstance } from 'fastify';
import { THIS_APP_TREE, checkoutModule, loadAppTree, type AppTree } from '../compare.js';
import { discard, PG_URL } from '../report.js';
import { now } from '../databases-client.js';
import type { Config } from '../../src/config.js';
import { nowIso } from '../../src/db/time.js';
import type { Store } from '../../src/db/index.js';
import type { MemoryLimiter } from '../../src/limits/limiter.js';
import type { DemoCustomer } from '../../src/admin/demo.js';
import { DEFAULT_LEASE_MS, Worker, workerSettings } from '../../src/queue/worker.js';
import { buildJobs } from '../../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../../src/provisioning/drivers.js';
import type { DatabaseDriver } from '../../src/provisioning/databases/driver.js';
import { DatabaseServersRepository } from '../../src/provisioning/databases/servers.repository.js';
import { CREATES, WARMUP, MARIADB_URL, BASE_URL, SERVER, PREFIX, type EngineName, mariadb } from './settings.js';

/** When the job's driver calls started and ended (absolute ms, `now()`), by database name. */
export interface DriverMarks {
  createStart?: number;
  createEnd?: number;
  checkEnd?: number;
}

/** What an instance is built from: this tree's modules, or those of the BENCH_COMPARE checkout (its own migrations, app, worker and jobs). */
export interface Tree extends AppTree {
  Worker: typeof Worker;
  workerSettings: typeof workerSettings;
  DEFAULT_LEASE_MS: typeof DEFAULT_LEASE_MS;
  buildJobs: typeof buildJobs;
  buildDrivers: typeof buildDrivers;
  closeDrivers: typeof closeDrivers;
  DatabaseServersRepository: typeof DatabaseServersRepository;
  nowIso: typeof nowIso;
}

export const THIS_TREE: Tree = { ...THIS_APP_TREE, Worker, workerSettings, DEFAULT_LEASE_MS, buildJobs, buildDrivers, closeDrivers, DatabaseServersRepository, nowIso };

export async function loadTree(dir: string): Promise<Tree> {
  const mod = checkoutModule(dir);
  const [app, worker, jobs, drivers, servers, time] = await Promise.all([
    loadAppTree(dir), mod('src/queue/worker.ts'), mod('src/resources/jobs.ts'), mod('src/provisioning/drivers.ts'), mod('src/provisioning/databases/servers.repository.ts'), mod('src/db/time.ts'),
  ]);
  return {
    ...app, Worker: worker.Worker, workerSettings: worker.workerSettings, DEFAULT_LEASE_MS: worker.DEFAULT_LEASE_MS, buildJobs: jobs.buildJobs,
    buildDrivers: drivers.buildDrivers, closeDrivers: drivers.closeDrivers, DatabaseServersRepository: servers.DatabaseServersRepository, nowIso: time.nowIso,
  };
}

export interface Instance {
  engine: EngineName;
  tree: Tree;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  owner: DemoCustomer;
  packageId: string;
  version: string;
  marks: Map<string, DriverMarks>;
  close(): Promise<void>;
}

/**
 * The driver as the worker uses it, with the times of its `create` and `isCreated` calls noted
 * (the statements themselves are the driver's).
 */
export function timedDriver(inner: DatabaseDriver, marks: Map<string, DriverMarks>): DatabaseDriver {
  const mark = (name: string) => marks.get(name) ?? marks.set(name, {}).get(name)!;
  return {
    ...inner,
    async create(server, db) {
      const m = mark(db.name);
      m.createStart ??= now();
      await inner.create(server, db);
      m.createEnd ??= now();
    },
    async isCreated(server, db) {
      const ok = await inner.isCreated(server, db);
      if (ok) mark(db.name).checkEnd ??= now();
      return ok;
    },
  };
}

/**
 * As `serve` builds it (src/cli/serve.ts), on a listening socket: the app, then the worker with
 * the application's jobs and drivers and the JOB_* defaults. The MariaDB is registered as the
 * default server of its version; the independent demo customer gets a package whose plan offers
 * it, with room for every create of the run.
 */
export async function startInstance(engine: EngineName, version: string, tree: Tree = THIS_TREE): Promise<Instance> {
  const { freshBenchStore, benchConfig, buildApp, MemoryLimiter, makeAdmin, loadDemoData, Worker, workerSettings, buildJobs, buildDrivers, closeDrivers, DatabaseServersRepository, nowIso } = tree;
  const { store, databaseUrl, drop: cleanup } = await freshBenchStore(engine, PG_URL);
  const config = benchConfig(databaseUrl, BASE_URL);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  const marks = new Map<string, DriverMarks>();
  // Whatever was started, in reverse; the worker first, so no job creates anything after the cleanup.
  const close = async () => {
    await worker?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    await cleanup();
  };
  try {
    const admin = await makeAdmin(store, config);
    const { data } = await loadDemoData(admin, config.publicBaseUrl);
    const owner = data.customers.find((c) => c.role === 'customer')!;
    await new DatabaseServersRepository(store.db).add({
      name: SERVER,
      db_type: 'mariadb',
      version,
      url: MARIADB_URL,
      access_hosts: JSON.stringify(['%']),
      is_default: 1,
      is_dedicated: 0,
      created_at: nowIso(),
    });
    const { planId } = await admin.packages.createPlan({ name: `${PREFIX} plan`, maxDatabases: 2 * (CREATES + WARMUP), databaseVersions: [`mariadb-${version}`] });
    // Per engine and tree: the databases of another run must not be found existing.
    const linuxUser = `${PREFIX}_${engine[0]}${tree === THIS_TREE ? '' : 'c'}`;
    const { packageId } = await admin.packages.createPackage({ customerId: Number(owner.id), planId, name: linuxUser, linuxUser });

    limiter = new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter, logStream: discard() });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    if (!addr || typeof addr === 'string') throw new Error('no TCP address');
    const built = buildDrivers({ config, store });
    drivers = { ...built, databases: timedDriver(built.databases, marks) };
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    return { engine, tree, store, config, app, base: `http://127.0.0.1:${addr.port}`, owner, packageId: String(packageId), version, marks, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
