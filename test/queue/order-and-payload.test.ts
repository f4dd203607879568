// Jobs on one object run in the order they were enqueued, a failed job does not block the next
// (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md "The job"), and a payload that
// does not fit its job definition fails at once.
import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { defineJob, JobRegistry, PermanentJobError } from '../../src/queue/types.js';
import { ENGINES } from '../helpers/app.js';
import { TestJobs } from '../helpers/jobs.js';
import { useQueue } from '../helpers/queue.js';
import { sleep } from '../helpers/wait.js';

describe.each(ENGINES)('job queue on %s', (engine) => {
  const { startWorker, enqueue, row, settled } = useQueue(engine);

  it('jobs on one object run in the order they were enqueued: a delete queued behind a create waits for it (docs/decisions/0004-provisioning-seams.md "The job")', async () => {
    const order: string[] = [];
    let releaseCreate!: () => void;
    const createMayFinish = new Promise<void>((r) => (releaseCreate = r));
    const handlers = new TestJobs()
      .register('dns-record', 'create', async (ctx) => {
        order.push(`create ${ctx.job.object_id}`);
        if (ctx.job.object_id === '7') await createMayFinish;
        return { status: 'done' };
      })
      .register('dns-record', 'delete', async (ctx) => {
        order.push(`delete ${ctx.job.object_id}`);
        return { status: 'done' };
      });
    await startWorker(handlers, { concurrency: 4, pollMs: 10 });
    const create = await enqueue({ objectId: '7' });
    const del = await enqueue({ objectId: '7', action: 'delete' });
    const other = await enqueue({ objectId: '8', action: 'delete' });
    // Another object is not held up; the delete of object 7 waits while its create runs.
    await settled(other);
    await sleep(200);
    expect((await row(del)).status).toBe('pending');
    expect((await row(del)).lease_owner).toBeNull();
    releaseCreate();
    await settled(del);
    expect(order.filter((o) => o.endsWith(' 7'))).toEqual(['create 7', 'delete 7']);
    expect((await row(create)).status).toBe('done');
  });

  it('a later job on an object runs once the earlier one failed for good (failed jobs do not block)', async () => {
    const handlers = new TestJobs()
      .register('dns-record', 'create', async () => {
        throw new PermanentJobError('broken');
      })
      .register('dns-record', 'delete', async () => ({ status: 'done' }));
    await startWorker(handlers);
    const create = await enqueue({ objectId: '9' });
    const del = await enqueue({ objectId: '9', action: 'delete' });
    expect(await settled(create)).toMatchObject({ status: 'failed', error: 'broken' });
    expect(await settled(del)).toMatchObject({ status: 'done' });
  });

  it('a payload that does not fit the job definition fails the job at once with a clear error (docs/decisions/0004-provisioning-seams.md "The job")', async () => {
    let runs = 0;
    const jobs = new JobRegistry().add(
      defineJob({
        type: 'dns-record',
        action: 'create',
        payload: Type.Object({ domain: Type.String() }),
        run: async () => {
          runs++;
          return { status: 'done' };
        },
      }),
    );
    await startWorker(jobs);
    const bad = await enqueue({ objectId: '10', payload: { domain: 42 } });
    const none = await enqueue({ objectId: '11' });
    const good = await enqueue({ objectId: '12', payload: { domain: 'example.com' } });
    expect(await settled(bad)).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/^job payload does not fit dns-record create at \/domain: .+/) });
    expect(await settled(none)).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/^job payload does not fit dns-record create: .+/) });
    expect(await settled(good)).toMatchObject({ status: 'done' });
    expect(runs).toBe(1);
  });
});
