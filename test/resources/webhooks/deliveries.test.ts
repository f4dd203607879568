// Webhook deliveries end to end (API guide "Webhooks"; docs/decisions/0027-webhooks.md): real jobs
// run by the worker, events recorded with their outcomes, a real receiver on loopback
// (WEBHOOK_ALLOW_CIDRS=127.0.0.0/8), the sender's clock moved forward for retries and the 24-h window.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { jobDone } from '../../helpers/jobs.js';
import { sleep, waitFor } from '../../helpers/wait.js';
import { arrived, createWebhook, postTxt, useWebhooksSuite, verifies, type Receiver } from '../../helpers/webhooks.js';
import { DatabaseServersRepository } from '../../../src/provisioning/databases/servers.repository.js';
import { nowIso } from '../../../src/db/time.js';

const HOUR = 3_600_000;

describe.each(ENGINES)('webhook deliveries on %s', { timeout: 60_000 }, (engine) => {
  const s = useWebhooksSuite(engine, { WEBHOOK_TIMEOUT_MS: '1000', JOB_MAX_ATTEMPTS: '1' });

  /** A webhook of `token` at the receiver's `path`; deleted when `body` is done. */
  async function withWebhook(token: string, path: string, events: string[], body: (w: { id: string; secret: string }) => Promise<void>) {
    const r = await createWebhook(s.t, token, { url: s.rx.url(path), events });
    expect(r.status, r.body).toBe(201);
    try {
      await body({ id: r.json.data.id, secret: r.json.data.attributes.secret });
    } finally {
      await call(s.t.app, 'DELETE', `/webhooks/${r.json.data.id}`, { token });
    }
  }
  const deliveries = async (token: string, id: string, query = '') => (await call(s.t.app, 'GET', `/webhooks/${id}/deliveries${query}`, { token })).json;
  /** The list once it holds `n` attempts: the sender records an attempt after the receiver's answer. */
  const recorded = (token: string, id: string, n: number) => waitFor(`${n} attempts recorded`, async () => {
    const list = await deliveries(token, id);
    return list.meta.total >= n ? list : null;
  });
  const answer = (rx: Receiver, path: string, f: (n: number) => { status: number; delayMs?: number }) => {
    let n = 0;
    rx.respond((r) => (r.path === path ? f(n++) : { status: 204 }));
  };

  it('queue-job.done goes out after the job is done (the receiver reads it done), signed as Standard Webhooks specifies; the attempt is listed', async () => {
    const token = s.x.end1.token;
    await withWebhook(token, '/done', ['queue-job.done'], async (w) => {
      const seen: string[] = [];
      s.rx.respond(async (r) => {
        if (r.path === '/done') seen.push((await call(s.t.app, 'GET', `/queue-jobs/${r.json.data.id}`, { token })).json.data.attributes.status);
        return { status: 204 };
      });
      const created = await postTxt(s.t, token, 'end1.example', '_done');
      const jobId = created.json.data.id;
      const recordId = String(created.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
      const [got] = await arrived(s.rx, '/done', 1);
      expect(seen).toEqual(['done']);
      const job = (await call(s.t.app, 'GET', `/queue-jobs/${jobId}`, { token })).json.data.attributes;
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers.host).toBe(`127.0.0.1:${s.rx.port}`);
      expect(got.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9]{22}$/);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(verifies(w.secret, got)).toBe(true);
      expect(verifies(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got)).toBe(false);
      expect(got.body).toBe(
        JSON.stringify({
          type: 'queue-job.done',
          timestamp: job.finished_at,
          data: {
            id: jobId, job_type: 'dns-record', action: 'create', status: 'done', error: null, created_at: job.created_at, finished_at: job.finished_at,
            object: { type: 'dns-record', id: recordId }, customer_id: s.x.end1.customerId,
            links: { 'queue-job': `${BASE}/queue-jobs/${jobId}`, object: `${BASE}/dns-records/${recordId}` },
          },
        }),
      );
      expect(got.body).not.toContain('whsec_');
      const list = await recorded(token, w.id, 1);
      expect(list).toEqual({
        links: { self: `${BASE}/webhooks/${w.id}/deliveries` },
        data: [{
          type: 'webhook-delivery',
          id: expect.stringMatching(/^[0-9]+$/),
          attributes: {
            event: 'queue-job.done', event_id: got.headers['webhook-id'], attempt: 1, status: 'delivered', response_status: 204, error: null,
            occurred_at: job.finished_at, attempted_at: expect.any(String), duration_ms: expect.any(Number), next_attempt_at: null,
          },
          relationships: { webhook: { data: { type: 'webhook', id: w.id } } },
          links: { webhook: `${BASE}/webhooks/${w.id}` },
        }],
        meta: { total: 1 },
      });
      expect((await deliveries(token, w.id, '?filter[status]=failed')).data).toEqual([]);
      expect((await deliveries(token, w.id, `?filter[event_id]=${got.headers['webhook-id']}&page[size]=1`)).meta).toEqual({ total: 1, page: { number: 1, size: 1, total_pages: 1 } });
      expect((await call(s.t.app, 'GET', `/webhooks/${w.id}/deliveries?filter[nope]=1`, { token })).status).toBe(400);
    });
  });

  it("one object's events go out in order: a failed attempt is retried after its back-off, and the object's next event waits for it", async () => {
    const token = s.x.end1.token;
    await withWebhook(token, '/order', ['dns-record.created', 'dns-record.deleted'], async (w) => {
      answer(s.rx, '/order', (n) => ({ status: n === 0 ? 500 : 204 }));
      const created = await postTxt(s.t, token, 'end1.example', '_order');
      const recordId = String(created.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
      await jobDone(s.t, token, created);
      const deleted = await call(s.t.app, 'DELETE', `/dns-records/${recordId}`, { token });
      await jobDone(s.t, token, deleted);
      const [failed] = (await recorded(token, w.id, 1)).data;
      // Not before the back-off (5 s on the sender's clock), and the delete waits behind the create.
      await sleep(300);
      expect(s.rx.at('/order').map((r) => [r.json.type, r.status])).toEqual([['dns-record.created', 500]]);
      expect(failed.attributes).toMatchObject({ event: 'dns-record.created', attempt: 1, status: 'failed', response_status: 500, error: 'answered 500' });
      // The back-off runs from the end of the attempt.
      const { next_attempt_at: next, attempted_at: at, duration_ms: took } = failed.attributes;
      expect(Date.parse(next) - Date.parse(at) - took).toBe(5_000);
      s.clock.advance(5_000);
      const got = await arrived(s.rx, '/order', 3);
      expect(got.map((r) => [r.json.type, r.status])).toEqual([['dns-record.created', 500], ['dns-record.created', 204], ['dns-record.deleted', 204]]);
      expect(got[1].headers['webhook-id']).toBe(got[0].headers['webhook-id']);
      expect(got[2].headers['webhook-id']).not.toBe(got[0].headers['webhook-id']);
      for (const r of got) expect(verifies(w.secret, r)).toBe(true);
      expect(got[1].json.data).toEqual({
        type: 'dns-record', id: recordId, customer_id: s.x.end1.customerId,
        links: { self: `${BASE}/dns-records/${recordId}`, 'queue-job': `${BASE}/queue-jobs/${created.json.data.id}` },
      });
      expect(got[2].json.data).toEqual({ type: 'dns-record', id: recordId, customer_id: s.x.end1.customerId, links: { 'queue-job': `${BASE}/queue-jobs/${deleted.json.data.id}` } });
      const attempts = (await recorded(token, w.id, 3)).data.map((d: any) => [d.attributes.event, d.attributes.attempt, d.attributes.status]);
      expect(attempts).toEqual([['dns-record.deleted', 1, 'delivered'], ['dns-record.created', 2, 'delivered'], ['dns-record.created', 1, 'failed']]);
    });
  });

  it('a receiver that does not answer in time (WEBHOOK_TIMEOUT_MS) gets the event again after the back-off', async () => {
    const token = s.x.end2.token;
    await withWebhook(token, '/slow', ['queue-job.done'], async (w) => {
      answer(s.rx, '/slow', (n) => ({ status: 204, delayMs: n === 0 ? 2_500 : 0 }));
      await jobDone(s.t, token, await postTxt(s.t, token, 'end2.example', '_slow'));
      const first = await waitFor('the first attempt to time out', async () => (await deliveries(token, w.id)).data[0]);
      expect(first.attributes).toMatchObject({ attempt: 1, status: 'failed', response_status: null, error: 'no answer within 1 s' });
      s.clock.advance(5_000);
      const second = await waitFor('the second attempt', async () => (await deliveries(token, w.id)).data.find((d: any) => d.attributes.attempt === 2));
      expect(second.attributes).toMatchObject({ status: 'delivered', response_status: 204, error: null });
      // The slow answer to the first arrives at last: the same event twice, as "at least once" allows.
      const got = await arrived(s.rx, '/slow', 2);
      expect(got[0].headers['webhook-id']).toBe(got[1].headers['webhook-id']);
    });
  });

  it('an event not delivered for 24 hours is given up and its webhook marked failing with the reason; the next delivery makes it ok again', async () => {
    const token = s.x.end2.token;
    await withWebhook(token, '/down', ['dns-record.created'], async (w) => {
      answer(s.rx, '/down', (n) => ({ status: n < 2 ? 503 : 204 }));
      await jobDone(s.t, token, await postTxt(s.t, token, 'end2.example', '_down1'));
      await recorded(token, w.id, 1);
      s.clock.advance(25 * HOUR);
      const last = await waitFor('the last attempt', async () => (await deliveries(token, w.id)).data.find((d: any) => d.attributes.attempt === 2));
      expect(last.attributes).toMatchObject({ status: 'failed', response_status: 503, next_attempt_at: null });
      const hook = (await call(s.t.app, 'GET', `/webhooks/${w.id}`, { token })).json.data.attributes;
      expect(hook.status).toBe('failing');
      expect(hook.failing_reason).toBe(`dns-record.created (${last.attributes.event_id}) of ${last.attributes.occurred_at} could not be delivered for 24 hours; the last attempt: answered 503`);
      expect((await call(s.t.app, 'GET', '/webhooks?filter[status]=failing', { token })).json.data.map((x: { id: string }) => x.id)).toEqual([w.id]);
      // Given up: it is not sent again; the next event is, and the webhook is ok again.
      await jobDone(s.t, token, await postTxt(s.t, token, 'end2.example', '_down2'));
      await arrived(s.rx, '/down', 3);
      await waitFor('status ok', async () => (await call(s.t.app, 'GET', `/webhooks/${w.id}`, { token })).json.data.attributes.status === 'ok');
      expect((await call(s.t.app, 'GET', `/webhooks/${w.id}`, { token })).json.data.attributes.failing_reason).toBeNull();
      const ids = s.rx.at('/down').map((r) => r.headers['webhook-id']);
      expect(ids[1]).toBe(ids[0]);
      expect(ids[2]).not.toBe(ids[0]);
    });
  });

  it('queue-job.failed carries the error of a job that failed for good, and no object event follows it', async () => {
    await new DatabaseServersRepository(s.t.store.db).add({
      name: 'db-gone', db_type: 'mariadb', version: '10.11', url: 'mysql://admin@127.0.0.1:9', access_hosts: '["%"]', is_default: 1, is_dedicated: 0, created_at: nowIso(),
    });
    const token = s.x.solo.token;
    await withWebhook(token, '/failed', ['*'], async () => {
      const r = await call(s.t.app, 'POST', '/databases', { token, body: { data: { type: 'database', attributes: { package_id: s.x.solo.packageId, db_type: 'mariadb', version: '10.11' } } } });
      expect(r.status, r.body).toBe(202);
      const [got] = await arrived(s.rx, '/failed', 1);
      const job = (await call(s.t.app, 'GET', `/queue-jobs/${got.json.data.id}`, { token })).json.data.attributes;
      expect(job.status).toBe('failed');
      expect(got.json).toEqual({
        type: 'queue-job.failed',
        timestamp: job.finished_at,
        data: expect.objectContaining({ job_type: 'database', action: 'create', status: 'failed', error: job.error, object: { type: 'database', id: r.json.data.id } }),
      });
      await sleep(300);
      expect(s.rx.at('/failed')).toHaveLength(1);
    });
  });

  it("tenancy: a reseller's webhook gets its end customers' events; an end customer's gets neither its reseller's nor another's; a switched-off one gets nothing", async () => {
    await withWebhook(s.x.reseller.token, '/reseller', ['dns-record.created'], async () => {
      await withWebhook(s.x.end1.token, '/end1', ['dns-record.created'], async () => {
        await withWebhook(s.x.end2.token, '/end2', ['dns-record.created'], async (e2) => {
          await call(s.t.app, 'PATCH', `/webhooks/${e2.id}`, { token: s.x.end2.token, body: { data: { type: 'webhook', id: e2.id, attributes: { active: false } } } });
          await jobDone(s.t, s.x.end1.token, await postTxt(s.t, s.x.end1.token, 'end1.example', '_t1'));
          await jobDone(s.t, s.x.reseller.token, await postTxt(s.t, s.x.reseller.token, 'reseller.example', '_t2'));
          await jobDone(s.t, s.x.end2.token, await postTxt(s.t, s.x.end2.token, 'end2.example', '_t3'));
          const customers = (path: string) => s.rx.at(path).map((r) => r.json.data.customer_id).sort();
          await arrived(s.rx, '/reseller', 3);
          await arrived(s.rx, '/end1', 1);
          await sleep(300);
          expect(customers('/reseller')).toEqual([s.x.reseller.customerId, s.x.end1.customerId, s.x.end2.customerId].sort());
          expect(customers('/end1')).toEqual([s.x.end1.customerId]);
          expect(customers('/end2')).toEqual([]);
        });
      });
    });
  });

  it('finished events and attempts are purged 7 days on', async () => {
    const token = s.x.end1.token;
    await withWebhook(token, '/purge', ['queue-job.done'], async (w) => {
      await jobDone(s.t, token, await postTxt(s.t, token, 'end1.example', '_purge'));
      await recorded(token, w.id, 1);
      s.clock.advance(8 * 24 * HOUR);
      await waitFor('the purge', async () => (await deliveries(token, w.id)).meta.total === 0, 5_000);
      expect(await s.t.store.db.selectFrom('webhook_messages').select('id').where('webhook_id', '=', Number(w.id)).execute()).toEqual([]);
    });
  });
});
