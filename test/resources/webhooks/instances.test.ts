// Two instances sharing one store (docs/decisions/0027-webhooks.md): two senders, each with a
// connection (pool) of its own to the same database, claim the messages under leases, so a healthy
// receiver gets every event exactly once, one object's events in order — and both senders take part.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, call, createTestApp, freshStore, ENGINES, type TestApp, type TestStore } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { filledLater } from '../../helpers/suite.js';
import { jobDone } from '../../helpers/jobs.js';
import { waitFor, sleep } from '../../helpers/wait.js';
import { createWebhook, postTxt, receiver, startSender, testClock, type Receiver } from '../../helpers/webhooks.js';
import { openStore, type Store } from '../../../src/db/index.js';
import type { WebhookDispatcher } from '../../../src/resources/webhooks/webhooks.dispatcher.js';

const RECORDS = 8;

describe.each(ENGINES)('two webhook senders on one %s store', { timeout: 60_000 }, (engine) => {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const rx = filledLater<Receiver>();
  let ts: TestStore;
  let second: Store;
  const senders: WebhookDispatcher[] = [];

  beforeAll(async () => {
    ts = await freshStore(engine);
    Object.assign(t, await createTestApp(engine, { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', JOB_POLL_MS: '20' }, { worker: true, dns: true, store: ts }));
    Object.assign(x, await seedTenants(t.admin));
    Object.assign(rx, await receiver());
    second = engine === 'postgres' ? await openStore(ts.url, { schema: ts.schema, poolSize: 5 }) : await openStore(ts.url);
  });
  afterAll(async () => {
    await Promise.all(senders.map((s) => s.stop()));
    await rx.close?.();
    await t.close?.();
    await second?.close();
    await ts?.drop();
  });

  it('deliver every event exactly once, in order per object, both taking part', async () => {
    const token = x.end1.token;
    const hook = await createWebhook(t, token, { url: rx.url('/both'), events: ['*'] });
    expect(hook.status, hook.body).toBe(201);
    // While a request is in flight its message is leased by the sender that sent it: the receiver
    // reads who that is from the store.
    const senderOf = new Map<string, string>();
    rx.respond(async (r) => {
      const m = await t.store.db.selectFrom('webhook_messages').select('lease_owner').where('event_id', '=', String(r.headers['webhook-id'])).executeTakeFirst();
      senderOf.set(String(r.headers['webhook-id']), String(m?.lease_owner));
      return { status: 204, delayMs: 30 };
    });
    // Two at a time each, so neither takes every message at once.
    senders.push(startSender(t, testClock(), { store: t.store, concurrency: 2 }), startSender(t, testClock(), { store: second, concurrency: 2 }));

    const records: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const r = await postTxt(t, token, 'end1.example', `_both${i}`);
      records.push(r.json.data.id);
    }
    for (const id of records) await jobDone(t, token, { headers: { 'content-location': `/queue-jobs/${id}` } });
    // Each create gives queue-job.done and dns-record.created.
    const total = 2 * RECORDS;
    await waitFor('every event', async () => rx.at('/both').length >= total, 20_000);
    await waitFor('every attempt recorded', async () => (await call(t.app, 'GET', `/webhooks/${hook.json.data.id}/deliveries`, { token })).json.meta.total >= total);
    await sleep(300);

    const got = rx.at('/both');
    const ids = got.map((r) => String(r.headers['webhook-id']));
    expect(got).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    const attempts = (await call(t.app, 'GET', `/webhooks/${hook.json.data.id}/deliveries`, { token })).json.data;
    expect(attempts.map((d: any) => [d.attributes.attempt, d.attributes.status])).toEqual(Array(total).fill([1, 'delivered']));
    // One object's two events: the job's outcome first, then the object's.
    for (const jobId of records) {
      const ofJob = (r: (typeof got)[number]) => (r.json.type === 'queue-job.done' ? r.json.data.id === jobId : r.json.data.links['queue-job'] === `${BASE}/queue-jobs/${jobId}`);
      const forJob = got.filter(ofJob).map((r) => r.json.type);
      expect(forJob, `job ${jobId}`).toEqual(['queue-job.done', 'dns-record.created']);
    }
    expect(new Set(senderOf.values())).toEqual(new Set(senders.map((s) => s.id)));
  });
});
