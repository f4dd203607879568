// Delivery at least once, effects exactly once (issue 3 item 2; DESIGN "Jobs are rows"): 200 jobs
// through four worker processes on PostgreSQL while workers are SIGKILLed mid-run and replaced.
// Every job must end `done` and every effect must exist exactly once; executions may be more.
// PostgreSQL only: it is the scale-out store whose claims (SKIP LOCKED) this proves; on SQLite,
// processes sharing one file are serialised by its single writer.
import { requirable } from './helpers/required.js';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { QueueJobsRepository } from '../src/resources/queue-jobs/queue-jobs.repository.js';
import { notifyEnqueued } from '../src/queue/notify.js';
import { freshStore, type TestStore } from './helpers/app.js';

const JOBS = 200;
const WORKERS = 4;
const KILLS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const suite = requirable(process.env.TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set (the proof runs on PostgreSQL)');

suite('job queue under SIGKILL (PostgreSQL, worker processes)', () => {
  let ts: TestStore;
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    ts = await freshStore('postgres');
    await sql`create table crash_runs (job_id integer not null, pid integer not null, started_at bigint not null)`.execute(ts.store.db);
    await sql`create table crash_effects (job_id integer primary key, pid integer not null)`.execute(ts.store.db);
    await sql`create table crash_counters (job_id integer primary key, n integer not null)`.execute(ts.store.db);
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await ts?.drop();
  });

  /** Starts a worker process; resolves once it claims jobs. */
  function startWorker(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/fixtures/queue-crash-worker.ts')], {
      env: { ...process.env, CRASH_SCHEMA: ts.schema },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    child.on('exit', () => children.delete(child));
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        if (String(d).startsWith('ready')) resolve(child);
      });
      child.on('exit', (code) => reject(new Error(`worker exited (${code}) before ready: ${err}`)));
    });
  }

  const pendingCount = async () =>
    Number((await sql<{ n: number }>`select count(*) as n from queue_jobs where status = 'pending'`.execute(ts.store.db)).rows[0].n);

  it('200 jobs, 4 workers, workers killed mid-run: every job done, every effect once', async () => {
    const started = Date.now();
    await Promise.all(Array.from({ length: WORKERS }, () => startWorker()));

    // Jobs and their counters commit together, then one NOTIFY wakes the worker processes.
    const ids: number[] = [];
    await ts.store.db.transaction().execute(async (trx) => {
      const repo = new QueueJobsRepository(trx);
      for (let i = 0; i < JOBS; i++) {
        const id = await repo.insert({ customerId: null, jobType: 'dns-record', action: 'create', objectId: String(i) });
        await sql`insert into crash_counters (job_id, n) values (${id}, 0)`.execute(trx);
        ids.push(id);
      }
    });
    const enqueuedAt = Date.now();
    await notifyEnqueued(ts.store);

    // Kill a worker that holds running jobs, start a replacement, repeat.
    const killed: number[] = [];
    const replacements: Promise<ChildProcess>[] = [];
    while (killed.length < KILLS && (await pendingCount()) > 0) {
      await sleep(400);
      const owners = await sql<{ lease_owner: string }>`
        select distinct lease_owner from queue_jobs where status = 'pending' and lease_owner is not null`.execute(ts.store.db);
      const busy = new Set(owners.rows.map((r) => Number(r.lease_owner.split(':')[1])));
      const victim = [...children].find((c) => c.pid !== undefined && busy.has(c.pid) && !killed.includes(c.pid));
      if (!victim) continue;
      victim.kill('SIGKILL');
      killed.push(victim.pid!);
      replacements.push(startWorker());
    }
    await Promise.all(replacements);

    const deadline = Date.now() + 45_000;
    while ((await pendingCount()) > 0 && Date.now() < deadline) await sleep(100);
    const finishedAt = Date.now();

    const jobs = await ts.store.db.selectFrom('queue_jobs').select(['id', 'status', 'error', 'attempts']).orderBy('id').execute();
    expect(jobs).toHaveLength(JOBS);
    expect(jobs.filter((j) => j.status !== 'done')).toEqual([]);

    const effects = await sql<{ job_id: number }>`select job_id from crash_effects order by job_id`.execute(ts.store.db);
    expect(effects.rows.map((r) => r.job_id)).toEqual(ids);
    const counters = await sql<{ job_id: number; n: number }>`select job_id, n from crash_counters where n <> 1`.execute(ts.store.db);
    expect(counters.rows).toEqual([]);

    const runs = await sql<{ job_id: number; n: number }>`
      select job_id, count(*) as n from crash_runs group by job_id having count(*) > 1`.execute(ts.store.db);
    const total = Number((await sql<{ n: number }>`select count(*) as n from crash_runs`.execute(ts.store.db)).rows[0].n);
    expect(killed).toHaveLength(KILLS);
    // The kills hit running handlers: some jobs ran again elsewhere, and still took effect once.
    expect(runs.rows.length).toBeGreaterThan(0);
    expect(total).toBeGreaterThanOrEqual(JOBS + runs.rows.length);
    const retaken = jobs.filter((j) => j.attempts > 0).length;
    console.log(
      `queue-crash: ${JOBS} jobs, ${WORKERS} workers, ${killed.length} SIGKILLs; ${total} executions ` +
        `(${runs.rows.length} jobs ran more than once, ${retaken} taken over after a lease expired); ` +
        `all done ${finishedAt - enqueuedAt} ms after enqueue (${finishedAt - started} ms with start-up)`,
    );
    // Typically 8–15 s; the limit leaves room for a loaded CI machine starting eight tsx processes.
  }, 90_000);
});
