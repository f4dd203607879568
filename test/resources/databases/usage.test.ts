// `usage` of /databases (API guide "Databases"): null until the first
// measurement; data + index bytes as the server's information_schema reports them, measured by
// `hostplane admin database refresh-usage` and by the daily scheduled job, which no client sees.
// A server that does not answer keeps its databases' last figures and is named.
import { sql } from 'kysely';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { runCli } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';
import { log } from '../../helpers/queue.js';
import { testDrivers } from '../../helpers/jobs.js';
import { pollUntil } from '../../helpers/wait.js';
import { login, requireMariadb, testServer, withAdmin } from '../../helpers/mariadb.js';
import { SERVER, useDatabasesSuite } from '../../helpers/databases.js';
import { Worker } from '../../../src/queue/worker.js';
import { buildJobs } from '../../../src/resources/jobs.js';
import { closeDrivers } from '../../../src/provisioning/drivers.js';
import { DatabaseServersRepository } from '../../../src/provisioning/databases/servers.repository.js';
import { nowIso } from '../../../src/db/time.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What information_schema says of `name` now: data + index bytes. */
const bytesOn = (name: string) =>
  withAdmin(testServer(), async (conn) => {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS b FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [name],
    );
    return Number(rows[0].b);
  });

/** Fills `name` as its customer would: a table with an index and `rows` rows of 200 bytes. */
async function fill(name: string, password: string, rows: number, table = 't') {
  const conn = await login(testServer(), name, password);
  try {
    await conn.query(`CREATE TABLE IF NOT EXISTS \`${name}\`.\`${table}\` (id INT PRIMARY KEY, v VARCHAR(255), KEY (v))`);
    const values = Array.from({ length: rows }, (_, i) => [i, 'x'.repeat(200)]);
    await conn.query(`INSERT INTO \`${name}\`.\`${table}\` (id, v) VALUES ?`, [values]);
    await conn.query(`ANALYZE TABLE \`${name}\`.\`${table}\``);
  } finally {
    await conn.end();
  }
}

requireMariadb()('database usage', () => {
  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    const s = useDatabasesSuite(engine);
    const token = () => s.x.end1.token;
    const usageOf = async (id: string) => (await call(s.t.app, 'GET', `/databases/${id}`, { token: token() })).json.data.attributes.usage;
    const refresh = () => runCli(['admin', 'database', 'refresh-usage', '--json'], { DATABASE_URL: s.databaseUrl, LOG_LEVEL: 'silent' });

    it('null before the first measurement; `admin database refresh-usage` stores data + index bytes with the time, GET shows them', async () => {
      const pkg = await s.newPackage();
      const a = await s.created(pkg.id);
      const b = await s.created(pkg.id);
      expect(await usageOf(a.id)).toBeNull();
      await fill(a.name, a.password, 2000);

      const before = nowIso();
      const r = await refresh();
      expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
      const out = JSON.parse(r.stdout);
      expect(out).toEqual({ measured: [{ server: SERVER, databases: expect.any(Number) }], failed: [] });
      expect(out.measured[0].databases).toBeGreaterThanOrEqual(2);

      const ua = await usageOf(a.id);
      expect(ua).toEqual({ bytes: await bytesOn(a.name), updated_at: expect.stringMatching(ISO) });
      expect(ua.bytes).toBeGreaterThan(2000 * 200);
      expect(ua.updated_at >= before).toBe(true);
      // An empty database measures 0, not null.
      expect(await usageOf(b.id)).toEqual({ bytes: 0, updated_at: expect.stringMatching(ISO) });
      // The list shows the same figures.
      const list = await call(s.t.app, 'GET', `/databases?filter[package_id]=${pkg.id}`, { token: token() });
      expect(list.json.data.map((d: any) => d.attributes.usage)).toEqual([ua, await usageOf(b.id)]);

      const text = await runCli(['admin', 'database', 'refresh-usage'], { DATABASE_URL: s.databaseUrl, LOG_LEVEL: 'silent' });
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^Measured \\d+ databases \\(${SERVER}: \\d+\\)\\.\\n$`));
    });

    it('the daily job: when its turn comes a worker measures every database; the job is no client\'s', async () => {
      const pkg = await s.newPackage();
      const a = await s.created(pkg.id);
      await fill(a.name, a.password, 500);
      // A second worker that looks at the schedule often; the suite's own worker took the first
      // turn when it started, before this database existed.
      const drivers = testDrivers(s.t.store);
      const worker = new Worker({ store: s.t.store, jobs: buildJobs(), drivers, log, pollMs: 50, scheduleEveryMs: 50 });
      await worker.start();
      try {
        expect(await usageOf(a.id)).toBeNull();
        // A day has passed, as far as the schedule knows.
        await sql`update queue_schedules set next_run_at = ${nowIso(-1000)} where name = 'database:refresh'`.execute(s.t.store.db);
        const usage = await pollUntil(() => usageOf(a.id), (u) => u !== null, 'usage measured by the scheduled job');
        expect(usage).toEqual({ bytes: await bytesOn(a.name), updated_at: expect.stringMatching(ISO) });
        const next = await s.t.store.db.selectFrom('queue_schedules').select('next_run_at').where('name', '=', 'database:refresh').executeTakeFirstOrThrow();
        expect(Date.parse(next.next_run_at)).toBeGreaterThan(Date.now() + 23 * 60 * 60 * 1000);
      } finally {
        await worker.stop();
        await closeDrivers(drivers);
      }
      // The refresh jobs belong to no customer: neither end1 nor its reseller sees them.
      const jobs = await s.t.store.db.selectFrom('queue_jobs').select(['id', 'customer_id', 'status']).where('action', '=', 'refresh').execute();
      expect(jobs.length).toBeGreaterThanOrEqual(2);
      for (const j of jobs) {
        expect(j.customer_id).toBeNull();
        for (const t of [token(), s.x.reseller.token]) {
          const r = await call(s.t.app, 'GET', `/queue-jobs/${j.id}`, { token: t });
          expect(r.status).toBe(404);
        }
      }
    });

    it('a server that does not answer: the others are measured, its databases keep their figures, exit 1 names it', async () => {
      const pkg = await s.newPackage();
      const a = await s.created(pkg.id);
      const closed = await freePort();
      // A server that was registered and has since gone away, with a database on it.
      await new DatabaseServersRepository(s.t.store.db).add({
        name: 'db-gone', db_type: 'mariadb', version: s.version, url: `mysql://root@127.0.0.1:${closed}`,
        access_hosts: JSON.stringify(['%']), is_default: 0, is_dedicated: 1, created_at: nowIso(),
      });
      const gone = await s.t.store.db
        .insertInto('databases')
        .values({
          customer_id: Number(s.x.end1.customerId), package_id: Number(pkg.id), server_name: 'db-gone', db_type: 'mariadb', version: s.version,
          name: `${pkg.linuxUser}_9`, description: '', state: 'live', usage_bytes: 12345, usage_updated_at: '2026-01-01T00:00:00.000Z', created_at: nowIso(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      try {
        const r = await refresh();
        expect(r.code).toBe(1);
        expect(JSON.parse(r.stdout)).toEqual({
          measured: [{ server: SERVER, databases: expect.any(Number) }],
          failed: [{ server: 'db-gone', error: expect.stringMatching(/ECONNREFUSED/) }],
        });
        expect(JSON.parse(r.stderr)).toEqual({
          error: { code: 'unreachable', message: expect.stringMatching(/^usage not measured on db-gone \(.*ECONNREFUSED.*\); their last figures stay$/) },
        });
        expect(await usageOf(a.id)).toEqual({ bytes: 0, updated_at: expect.stringMatching(ISO) });
        expect(await usageOf(String(gone.id))).toEqual({ bytes: 12345, updated_at: '2026-01-01T00:00:00.000Z' });
      } finally {
        await s.t.store.db.deleteFrom('databases').where('id', '=', gone.id).execute();
        await s.t.store.db.deleteFrom('database_servers').where('name', '=', 'db-gone').execute();
      }
    });
  });
});
