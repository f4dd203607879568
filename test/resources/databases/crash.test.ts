// Database create jobs under SIGKILL on PostgreSQL (API guide "Queue jobs", "Databases";
// docs/decisions/0005-dead-workers.md). 30 databases are POSTed through HTTP to an app without a
// worker of its own; three real `hostplane worker` processes on its schema run the create jobs
// against the test MariaDB. A worker holding running create jobs is SIGKILLed as the first
// databases go live and another halfway, a replacement starts after each kill, and the jobs the
// dead ones held are taken over. A client then sees every job done, the 30 databases listed once
// each, and on the server exactly those 30 databases and users, every password working on its
// own database only. The time from the kills until all jobs were done is reported, not asserted.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import mysql from 'mysql2/promise';
import { call } from '../../helpers/app.js';
import { login, loginResult, requireMariadb, testServer, withAdmin } from '../../helpers/mariadb.js';
import { accountsOf, postDatabase, useDatabasesSuite } from '../../helpers/databases.js';
import { requirable } from '../../helpers/required.js';
import { pollUntil, sleep } from '../../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../../src/main.ts', import.meta.url));
const DATABASES = 30;
const WORKERS = 3;
/** A worker is killed once this many databases are live: the first early in the run, the second halfway. */
const KILL_AT_LIVE = [1, DATABASES / 2];

/** A `hostplane worker` process and the worker id it logged. */
interface WorkerProcess {
  child: ChildProcess;
  id: string;
  exited: Promise<void>;
  output: () => string;
}

/** What was true when a worker was SIGKILLed (read before and after, see below). */
interface Kill {
  workerId: string;
  at: number;
  /** Databases live just before the kill. */
  live: number;
  /** Create jobs still pending just after the kill. */
  pending: number;
  /** Jobs the dead worker held (claimed, lease running) when it died. */
  held: number;
}

requireMariadb()('database create jobs under SIGKILL', () => {
  requirable(process.env.TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set')('on postgres (hostplane worker processes)', () => {
    // No worker in this process: only the `hostplane worker` processes run jobs.
    const s = useDatabasesSuite('postgres', { worker: false });
    /** Worker processes still running. */
    const workers = new Set<WorkerProcess>();
    /** Every worker process started, for the message of a failure. */
    const started: WorkerProcess[] = [];
    const outputs = () => started.map((w) => `--- worker ${w.child.pid} (${w.id || 'not ready'}):\n${w.output().slice(-3000)}`).join('\n');

    afterAll(async () => {
      for (const w of workers) w.child.kill('SIGKILL');
      await Promise.all([...workers].map((w) => w.exited));
    });

    /** Starts `hostplane worker` on the app's schema; resolves once it is ready, with the id it claims under. */
    function startWorker(): Promise<WorkerProcess> {
      const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker'], {
        env: { ...process.env, DATABASE_URL: s.databaseUrl, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const w: WorkerProcess = { child, id: '', exited, output: () => out };
      workers.add(w);
      started.push(w);
      void exited.then(() => workers.delete(w));
      return new Promise((resolve, reject) => {
        const onData = () => {
          const id = /"worker":"([^"]+)"[^\n]*"msg":"worker started"/.exec(out)?.[1];
          if (!id || !out.includes('hostplane worker ready')) return;
          w.id = id;
          child.stdout!.off('data', onData);
          resolve(w);
        };
        child.stdout!.on('data', onData);
        void exited.then(() => reject(new Error(`worker exited (${child.exitCode}) before it was ready: ${out}`)));
      });
    }

    const db = () => s.t.store.db;
    const liveCount = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from databases where state = 'live'`.execute(db())).rows[0].n);
    // Only the create jobs count: the workers also enqueue and run scheduled jobs of their own.
    const pendingCount = async () =>
      Number(
        (await sql<{ n: string }>`select count(*) as n from queue_jobs where job_type = 'database' and action = 'create' and status = 'pending'`.execute(db()))
          .rows[0].n,
      );
    /** Running create jobs (pending, lease not ended) per worker id; a lease token is `${workerId}#${seq}`. */
    async function heldBy(): Promise<Map<string, number>> {
      const rows = await sql<{ lease_owner: string }>`
        select lease_owner from queue_jobs
         where job_type = 'database' and action = 'create' and status = 'pending' and lease_until is not null and lease_owner is not null`.execute(db());
      const held = new Map<string, number>();
      for (const r of rows.rows) {
        const owner = r.lease_owner.slice(0, r.lease_owner.lastIndexOf('#'));
        held.set(owner, (held.get(owner) ?? 0) + 1);
      }
      return held;
    }

    it(`${DATABASES} creates, ${WORKERS} worker processes, ${KILL_AT_LIVE.length} SIGKILLed mid-run: every job done, every database created exactly once and working`, async () => {
      const { id: packageId, linuxUser } = await s.newPackage({ maxDatabases: DATABASES + 10 });
      const { t, version } = s;
      const token = s.x.end1.token;

      // The client's side: all POSTs answered 202 before any worker runs, each keeps its one-time password.
      const posted = await Promise.all(
        Array.from({ length: DATABASES }, () => postDatabase(t, token, { package_id: packageId, db_type: 'mariadb', version })),
      );
      const postedAt = Date.now();
      expect(posted.map((r) => r.status)).toEqual(posted.map(() => 202));
      const created = posted.map((r) => ({
        id: r.json.data.id as string,
        name: r.json.data.attributes.name as string,
        password: r.json.data.attributes.password as string,
        job: String(r.headers['content-location']).replace(/^https?:\/\/[^/]+/, ''),
      }));
      const expectedNames = Array.from({ length: DATABASES }, (_, i) => `${linuxUser}_${i + 1}`);
      expect(created.map((c) => c.name).sort()).toEqual([...expectedNames].sort());

      // The workers start together; the kills are watched for while they start.
      const starting = Promise.all(Array.from({ length: WORKERS }, () => startWorker()));
      let startFailed: unknown = null;
      starting.catch((err) => (startFailed = err));

      // Kill a worker that holds running create jobs once some databases are live, start a
      // replacement, repeat. The live count only grows and the pending count only shrinks, so
      // "live before the kill" and "pending after the kill" both held at the moment of the kill.
      const kills: Kill[] = [];
      const replacements: Promise<WorkerProcess>[] = [];
      const deadline = Date.now() + 40_000;
      while (kills.length < KILL_AT_LIVE.length) {
        if (startFailed) throw startFailed;
        if (Date.now() > deadline) throw new Error(`no kill ${kills.length + 1} within 40 s (live ${await liveCount()}):\n${outputs()}`);
        const live = await liveCount();
        if (live < KILL_AT_LIVE[kills.length]) {
          await sleep(5);
          continue;
        }
        const held = await heldBy();
        const victim = [...workers].find((w) => w.id && (held.get(w.id) ?? 0) > 0);
        if (!victim) {
          if ((await pendingCount()) === 0) break;
          await sleep(5);
          continue;
        }
        const at = Date.now();
        victim.child.kill('SIGKILL');
        await victim.exited;
        const pending = await pendingCount();
        // Nobody can end the dead worker's leases before its lock has been seen free twice, 1.5 s apart.
        const heldAtDeath = (await heldBy()).get(victim.id) ?? 0;
        kills.push({ workerId: victim.id, at, live, pending, held: heldAtDeath });
        const replacement = startWorker();
        replacement.catch(() => {}); // awaited below
        replacements.push(replacement);
        if (pending === 0) break;
      }

      const done = await pollUntil(pendingCount, (n) => n === 0, 'all create jobs to settle', 45_000)
        .catch((err: Error) => {
          throw new Error(`${err.message}\n${outputs()}`);
        })
        .then(() => Date.now());
      await starting;
      await Promise.all(replacements);

      const retaken = Number(
        (await sql<{ n: string }>`select count(*) as n from queue_jobs where job_type = 'database' and action = 'create' and attempts > 0`.execute(db())).rows[0].n,
      );
      console.log(
        `databases-crash (postgres): ${DATABASES} creates, ${WORKERS} workers, ${kills.length} SIGKILLs ` +
          `(${kills.map((k) => `live ${k.live}, pending ${k.pending}, held by the dead worker ${k.held}`).join('; ')}); ` +
          `${retaken} jobs taken over from a dead worker; all jobs done ${kills.map((k) => `${done - k.at} ms`).join(' / ')} after the kills, ${done - postedAt} ms after the POSTs (with worker start-up)`,
      );

      // The kills happened mid-run: databases already live, create jobs still pending, and at
      // least one kill took running create jobs down with it.
      expect(kills).toHaveLength(KILL_AT_LIVE.length);
      expect(kills[0].live).toBeGreaterThan(0);
      expect(kills[0].pending).toBeGreaterThan(0);
      expect(kills.some((k) => k.held > 0)).toBe(true);

      // Every job as the client polls it: done, without an error.
      for (const c of created) {
        const job = await call(t.app, 'GET', c.job, { token });
        expect(job.status).toBe(200);
        expect(job.json.data.attributes, c.job).toMatchObject({ job_type: 'database', action: 'create', status: 'done', error: null });
      }

      // The list shows exactly the 30, each once, with its name.
      const list = await call(t.app, 'GET', `/databases?filter[package_id]=${packageId}&page[size]=100`, { token });
      expect(list.status).toBe(200);
      expect(list.json.meta.total).toBe(DATABASES);
      expect(list.json.data.map((d: any) => [d.id, d.attributes.name]).sort()).toEqual(created.map((c) => [c.id, c.name]).sort());

      // On the server: exactly these databases and users with the package's prefix, one account each.
      const onServer = await withAdmin(testServer(), async (conn) => {
        const like = `${linuxUser}\\_%`;
        const [schemas] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [like]);
        const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT DISTINCT User AS n FROM mysql.user WHERE User LIKE ?', [like]);
        return { schemas: schemas.map((r) => String(r.n)).sort(), users: users.map((r) => String(r.n)).sort() };
      });
      expect(onServer).toEqual({ schemas: [...expectedNames].sort(), users: [...expectedNames].sort() });
      for (const c of created) expect(await accountsOf(c.name), c.name).toEqual(['%']);

      // Every one-time password logs in and sees its own database only.
      for (const c of created) {
        expect(await loginResult(testServer(), c.name, c.password), c.name).toBe('ok');
        const conn = await login(testServer(), c.name, c.password);
        try {
          const [dbs] = await conn.query<mysql.RowDataPacket[]>('SHOW DATABASES');
          expect(dbs.map((d) => String(d.Database)).sort(), c.name).toEqual(['information_schema', c.name].sort());
        } finally {
          await conn.end();
        }
      }
    }, 90_000);
  });
});
