// What the /databases tests share: an app with a worker whose store has the test
// MariaDB registered as the default server of its real version, packages with unique Linux users
// (the derived database names start with them, so useTestNames' cleanup finds them), and job waits.
import { afterAll, beforeAll, expect } from 'vitest';
import mysql from 'mysql2/promise';
import { call, createTestApp, freshStore, processUrl, type EngineName, type TestApp } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';
import { jobDone } from './jobs.js';
import { MARIADB_URL, testServer, useTestNames, withAdmin } from './mariadb.js';
import { DatabaseServersRepository } from '../../src/provisioning/databases/servers.repository.js';
import { nowIso } from '../../src/db/time.js';
import type { DatabaseServerConn } from '../../src/provisioning/databases/driver.js';

export const SERVER = 'db-test';

/** major.minor of the test server, as an operator registers it: '10.11'. */
export async function serverVersion(): Promise<string> {
  const v = await withAdmin(testServer(), async (conn) => (await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v'))[0][0].v as string);
  return /^(\d+\.\d+)/.exec(v)![1];
}

export interface DatabasesSuite {
  t: TestApp;
  /** DATABASE_URL of the suite's store for the CLI. */
  databaseUrl: string;
  x: Tenants;
  version: string;
  names: ReturnType<typeof useTestNames>;
  /** A package of end1 with a unique Linux user, on a plan offering the test server's version. */
  newPackage(o?: { maxDatabases?: number; versions?: string[] }): Promise<{ id: string; linuxUser: string }>;
  /** A database created by end1 in `packageId` whose job is done: its id, name, password and the 202. */
  created(packageId: string, description?: string): Promise<{ id: string; name: string; password: string; response: Awaited<ReturnType<typeof call>> }>;
}

/**
 * Registers the app, tenants and server for one engine: `const s = useDatabasesSuite(engine)`;
 * `{ worker: false }` for an app without a worker in this process (other processes run the jobs).
 */
export function useDatabasesSuite(engine: EngineName, { worker = true } = {}): DatabasesSuite {
  const names = useTestNames(() => [testServer()]);
  const s = { names } as DatabasesSuite;
  let dropStore: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const ts = await freshStore(engine);
    s.databaseUrl = processUrl(ts);
    s.t = await createTestApp(engine, {}, { worker, store: ts });
    dropStore = () => ts.drop();
    s.x = await seedTenants(s.t.admin);
    s.version = await serverVersion();
    await new DatabaseServersRepository(s.t.store.db).add({
      name: SERVER,
      db_type: 'mariadb',
      version: s.version,
      url: MARIADB_URL!,
      access_hosts: JSON.stringify(['%']),
      is_default: 1,
      is_dedicated: 0,
      created_at: nowIso(),
    });
    s.newPackage = async (o = {}) => {
      const { planId } = await s.t.admin.packages.createPlan({ name: names.next('plan'), maxDatabases: o.maxDatabases ?? 5, databaseVersions: o.versions ?? [`mariadb-${s.version}`] });
      const linuxUser = names.next();
      const { packageId } = await s.t.admin.packages.createPackage({ customerId: Number(s.x.end1.customerId), planId, name: linuxUser, linuxUser });
      return { id: String(packageId), linuxUser };
    };
    s.created = async (packageId, description) => {
      const token = s.x.end1.token;
      const r = await postDatabase(s.t, token, { package_id: packageId, db_type: 'mariadb', version: s.version, ...(description ? { description } : {}) });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token, r);
      const a = r.json.data.attributes;
      return { id: r.json.data.id as string, name: a.name as string, password: a.password as string, response: r };
    };
  }, 60_000);
  afterAll(async () => {
    await s.t?.close();
    await dropStore?.();
  });
  return s;
}

/** POST /databases as `token`. */
export const postDatabase = (t: TestApp, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/databases', { token, body: { data: { type: 'database', attributes } } });

/** The databases the admin sees among `names` on `server` (the test server unless given): `schemasOn([n])` or `schemasOn(server, [n])`. */
export async function schemasOn(...args: [string[]] | [DatabaseServerConn, string[]]): Promise<string[]> {
  const [server, names] = args.length === 1 ? [testServer(), args[0]] : args;
  return withAdmin(server, async (conn) => {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?)', [names]);
    return rows.map((r) => String(r.n));
  });
}

/** The accounts of `user` on the test server. */
export async function accountsOf(user: string): Promise<string[]> {
  return withAdmin(testServer(), async (conn) => {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT Host FROM mysql.user WHERE User = ?', [user]);
    return rows.map((r) => String(r.Host));
  });
}
