// The purge of finished jobs (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md): a
// worker deletes done jobs 24 h after finished_at and keeps younger done, failed and pending ones.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { TestJobs } from '../helpers/jobs.js';
import { useQueue } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

describe.each(ENGINES)('job queue on %s', (engine) => {
  const { store, startWorker, enqueue, row } = useQueue(engine);

  it('purge: done jobs 24 h past finished_at are deleted; younger done, failed and pending jobs stay (API guide "Queue jobs")', async () => {
    const h = 3_600_000;
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const old = await enqueue({ status: 'done', createdAt: ago(26 * h), finishedAt: ago(24 * h + 60_000) }, false);
    const young = await enqueue({ status: 'done', createdAt: ago(24 * h), finishedAt: ago(23 * h) }, false);
    const failed = await enqueue({ status: 'failed', error: 'x', createdAt: ago(30 * h), finishedAt: ago(29 * h) }, false);
    const pending = await enqueue({ createdAt: ago(30 * h), runAfter: new Date(Date.now() + h).toISOString() }, false);
    await startWorker(new TestJobs());
    await waitFor('purge', async () => !(await row(old)));
    const left = await store.db.selectFrom('queue_jobs').select('id').orderBy('id').execute();
    expect(left.map((r) => r.id)).toEqual([young, failed, pending]);
  });
});
