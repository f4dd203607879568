// The dns-record job runs (docs/decisions/0003-dns-propagation.md; API guide "Queue jobs"): create
// and delete record one DNS change and wait until a live DNS server has applied it, re-runs wait
// rather than finish early, and the poll interval grows with the job's age.
import { describe, expect, it } from 'vitest';
import { ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { appRuns } from '../../helpers/jobs.js';
import { dnsRecordsSuite, recordIdOf, txt } from '../../helpers/dns-records.js';
import type { JobContext, JobResult } from '../../../src/queue/types.js';
import type { QueueJobRow } from '../../../src/queue/jobs.js';
import { applyPollMs } from '../../../src/resources/dns-records/dns-records.jobs.js';

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, row, idsOf } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('the job handlers (docs/decisions/0003-dns-propagation.md)', () => {
    const handlers = () => appRuns();
    /** A JobContext as the worker builds it; progress saved in memory. */
    const ctxFor = (job: QueueJobRow, progress: unknown = null) => {
      const saved: unknown[] = [];
      const ctx: JobContext = {
        job,
        payload: JSON.parse(job.payload ?? 'null'),
        progress,
        async saveProgress(p) {
          saved.push(p);
          ctx.progress = p;
        },
        store: t.store,
        drivers: t.drivers,
        log: t.app.log,
      };
      return { ctx, saved };
    };
    const jobRow = (id: string) => t.store.db.selectFrom('queue_jobs').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
    const changes = async () => Number((await t.store.db.selectFrom('dns_changes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    it('create: pending → active with one recorded change, then waits until a DNS server answers it; a re-run only waits', async () => {
      const created = await post(txt('_handler', 'h'));
      const id = recordIdOf(created);
      const job = await jobRow(created.json.data.id);
      const before = await changes();
      const serial = (await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'end1.example').executeTakeFirstOrThrow()).dns_serial;
      const { ctx, saved } = ctxFor(job);
      const handler = handlers().get('dns-record', 'create')!;
      // No DNS server runs in this app: the change is never answered, so the job waits.
      expect(await handler(ctx)).toEqual<JobResult>({ status: 'wait', ms: 20 });
      expect((await row(id))?.state).toBe('active');
      expect(await changes()).toBe(before + 1);
      const last = await t.store.db.selectFrom('dns_changes').select(['id', 'domain']).orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(last.domain).toBe('end1.example');
      expect(saved).toEqual([{ changeId: last.id }]);
      expect((await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'end1.example').executeTakeFirstOrThrow()).dns_serial).toBe(serial + 1);
      expect(await handler(ctx)).toEqual<JobResult>({ status: 'wait', ms: 20 });
      expect(await changes()).toBe(before + 1);
      // Once a live server has applied that change, the job is done.
      await t.store.db.insertInto('dns_servers').values({ id: 'test-server', applied_change_id: last.id, heartbeat_at: new Date().toISOString(), started_at: new Date().toISOString() }).execute();
      try {
        expect(await handler(ctx)).toEqual<JobResult>({ status: 'done' });
      } finally {
        await t.store.db.deleteFrom('dns_servers').where('id', '=', 'test-server').execute();
      }
    });

    it('create of a record deleted before its job ran is done without a change', async () => {
      const created = await post(txt('_handler-gone', 'h'));
      await call(t.app, 'DELETE', `/dns-records/${recordIdOf(created)}`, { token: x.end1.token });
      const before = await changes();
      const { ctx, saved } = ctxFor(await jobRow(created.json.data.id));
      expect(await handlers().get('dns-record', 'create')!(ctx)).toEqual({ status: 'done' });
      expect(await changes()).toBe(before);
      expect(saved).toEqual([]);
    });

    it('delete: the row goes with one change; a re-run after the row is gone announces again rather than finishing early', async () => {
      const id = (await idsOf('end1.example'))['A www'];
      const del = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      const job = await jobRow(del.json.data.id);
      const before = await changes();
      const first = ctxFor(job);
      expect(await handlers().get('dns-record', 'delete')!(first.ctx)).toEqual({ status: 'wait', ms: 20 });
      expect(await row(id)).toBeUndefined();
      expect(await changes()).toBe(before + 1);
      // A run that lost its progress (it died before the commit was acknowledged) records a newer change to wait for.
      const again = ctxFor(job);
      expect(await handlers().get('dns-record', 'delete')!(again.ctx)).toEqual({ status: 'wait', ms: 20 });
      expect(await changes()).toBe(before + 2);
    });

    it('waits briefly at first, then less often (a DNS server that is down costs little)', () => {
      const at = Date.parse('2026-01-01T00:00:00.000Z');
      const job = { created_at: '2026-01-01T00:00:00.000Z' };
      expect([0, 1999, 2000, 29_999, 30_000, 3_600_000].map((ms) => applyPollMs(job, at + ms))).toEqual([20, 20, 200, 200, 1000, 1000]);
    });

    it('a job without a usable record id fails permanently', async () => {
      const job = { ...(await jobRow((await post(txt('_handler-bad', 'h'))).json.data.id)), object_id: 'x' };
      await expect(handlers().get('dns-record', 'create')!(ctxFor(job).ctx)).rejects.toThrow('has no dns-record to act on');
    });
  });
});
