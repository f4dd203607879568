// Scheduled jobs (the daily usage refresh; src/queue/types.ts JobDefinition.every):
// whichever of several workers first sees a schedule due enqueues ONE job for that turn, without a
// customer (so no client lists it), and the next turn is `every` later. The turn and the job
// commit together (queue_schedules, migration 006).
import { sql } from 'kysely';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { QueueRepository } from '../../src/queue/queue.repository.js';
import { defineJob, JobRegistry } from '../../src/queue/types.js';
import { ENGINES } from '../helpers/app.js';
import { useQueue } from '../helpers/queue.js';
import { sleep, waitFor } from '../helpers/wait.js';

const HOUR = 60 * 60 * 1000;

describe.each(ENGINES)('scheduled jobs on %s', (engine) => {
  const { store, startWorker, secondStore } = useQueue(engine);

  /** A registry with one scheduled job (every hour) whose runs are counted. */
  function hourly() {
    const runs: number[] = [];
    const jobs = new JobRegistry().add(
      defineJob({ type: 'database', action: 'refresh', payload: Type.Object({}), every: HOUR, run: async (ctx) => (runs.push(ctx.job.id), { status: 'done' }) }),
    );
    return { jobs, runs };
  }

  const scheduledJobs = () => store.db.selectFrom('queue_jobs').selectAll().where('job_type', '=', 'database').where('action', '=', 'refresh').orderBy('id').execute();
  const nextRunAt = async () => (await store.db.selectFrom('queue_schedules').select('next_run_at').where('name', '=', 'database:refresh').executeTakeFirstOrThrow()).next_run_at;

  it('three workers checking every 20 ms enqueue one job per turn; the next turn is `every` later; a due turn is taken once more', async () => {
    const { jobs, runs } = hourly();
    const before = Date.now();
    for (let i = 0; i < 3; i++) await startWorker(jobs, { scheduleEveryMs: 20 });
    await waitFor('the first scheduled run', async () => runs.length > 0);
    // Some 25 checks by the three workers later, still the one job of the first turn.
    await sleep(500);
    let rows = await scheduledJobs();
    expect(rows).toEqual([expect.objectContaining({ customer_id: null, object_id: null, status: 'done', payload: '{}' })]);
    expect(runs).toEqual([rows[0].id]);
    const next = Date.parse(await nextRunAt());
    expect(next).toBeGreaterThanOrEqual(before + HOUR);
    expect(next).toBeLessThanOrEqual(Date.now() + HOUR);

    // The hour has passed (as far as the schedule knows): one more job, by one of the workers.
    await sql`update queue_schedules set next_run_at = ${new Date(Date.now() - 1000).toISOString()}`.execute(store.db);
    await waitFor('the second scheduled run', async () => runs.length > 1);
    await sleep(500);
    rows = await scheduledJobs();
    expect(rows.map((r) => r.status)).toEqual(['done', 'done']);
    expect(runs).toEqual(rows.map((r) => r.id));
  });

  it('a worker started after another does not enqueue the turn again (restarts do not refresh every time)', async () => {
    const { jobs, runs } = hourly();
    const first = await startWorker(jobs, { scheduleEveryMs: 20 });
    await waitFor('the first scheduled run', async () => runs.length > 0);
    await first.stop();
    await startWorker(jobs, { scheduleEveryMs: 20 });
    await sleep(300);
    expect((await scheduledJobs()).length).toBe(1);
  });

  // SQLite: one connection per process (better-sqlite3 blocks the event loop while it waits for
  // another connection's lock), so the twenty take turns on it, as the workers of one process do.
  it('concurrent turns (from two connections on PostgreSQL): exactly one of twenty is taken', async () => {
    const other = engine === 'postgres' ? await secondStore() : store;
    const takes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? other : store).db.transaction().execute((trx) => new QueueRepository(trx).takeScheduledTurn('test:race', HOUR)),
      ),
    );
    expect(takes.filter(Boolean)).toHaveLength(1);
  });
});
