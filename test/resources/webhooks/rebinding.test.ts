// DNS rebinding and webhook deliveries (API guide "Webhooks"; docs/decisions/0027-webhooks.md §6):
// a receiver's name is resolved at every attempt, every address is judged, and the connection goes
// to the judged address without asking DNS again. The name is answered by a DNS server of the test
// whose answers change between questions: 127.0.0.2 (allowed here by WEBHOOK_ALLOW_CIDRS, where the
// good receiver listens) or 127.0.0.1 (loopback, refused; a second receiver on the same port there
// records anything that would get through).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { filledLater } from '../../helpers/suite.js';
import { jobDone } from '../../helpers/jobs.js';
import { sleep, waitFor } from '../../helpers/wait.js';
import { arrived, createWebhook, postTxt, receiver, scriptedDns, startSender, type Receiver } from '../../helpers/webhooks.js';
import type { WebhookDispatcher } from '../../../src/resources/webhooks/webhooks.dispatcher.js';

const NAME = 'hooks.rebinding.test';
const REFUSED = `${NAME} resolves to 127.0.0.1, which is a loopback address: webhooks are not sent there`;

describe.each(ENGINES)('webhook deliveries to a name whose address changes (DNS rebinding) on %s', { timeout: 60_000 }, (engine) => {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const good = filledLater<Receiver>();
  const refused = filledLater<Receiver>();
  const ns = filledLater<Awaited<ReturnType<typeof scriptedDns>>>();
  let sender: WebhookDispatcher;
  // Ports of this suite's range, one set per engine.
  const port = 23080 + ENGINES.indexOf(engine);

  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine, { WEBHOOK_ALLOW_CIDRS: '127.0.0.2', JOB_POLL_MS: '20' }, { worker: true, dns: true }));
    Object.assign(x, await seedTenants(t.admin));
    Object.assign(good, await receiver({ host: '127.0.0.2', port }));
    Object.assign(refused, await receiver({ host: '127.0.0.1', port }));
    Object.assign(ns, await scriptedDns(23053 + ENGINES.indexOf(engine)));
    sender = startSender(t, undefined, { resolve: ns.resolve });
  });
  afterAll(async () => {
    await sender?.stop();
    for (const r of [good, refused, ns]) await r.close?.();
    await t.close?.();
  });

  const token = () => x.end1.token;
  const hooks: string[] = [];
  // A refused message is due again later: its webhook goes, so no other test meets it.
  afterEach(async () => {
    for (const id of hooks.splice(0)) await call(t.app, 'DELETE', `/webhooks/${id}`, { token: token() });
  });
  const attempts = async (id: string) => (await call(t.app, 'GET', `/webhooks/${id}/deliveries`, { token: token() })).json;
  /** A webhook of end1 at `http://<NAME>:<port><path>` for queue-job.done. */
  async function hookAt(path: string): Promise<string> {
    const r = await createWebhook(t, token(), { url: `http://${NAME}:${port}${path}`, events: ['queue-job.done'] });
    expect(r.status, r.body).toBe(201);
    hooks.push(r.json.data.id);
    return r.json.data.id;
  }

  it('a name that answered an allowed address and then a loopback one: the first event is delivered, the next attempt refused with why, nothing reaches loopback', async () => {
    ns.answerA((n) => (n === 0 ? '127.0.0.2' : '127.0.0.1'));
    const id = await hookAt('/rebind');
    await jobDone(t, token(), await postTxt(t, token(), x.end1.domain, '_rebind-1'));
    await arrived(good, '/rebind', 1);
    await jobDone(t, token(), await postTxt(t, token(), x.end1.domain, '_rebind-2'));
    // Each attempt is recorded once the receiver answered, so the count of attempts is final once
    // it equals the questions asked (a refused message is tried again 5 s later: more may come).
    const list = await waitFor('the second attempt', async () => {
      const l = await attempts(id);
      return l.meta.total >= 2 && l.meta.total === ns.aQuestions() ? l : null;
    });
    const attempt = (n: number, status: string, responseStatus: number | null, error: string | null, next: unknown) => ({
      type: 'webhook-delivery',
      id: expect.stringMatching(/^[0-9]+$/),
      attributes: {
        event: 'queue-job.done', event_id: expect.stringMatching(/^msg_/), attempt: n, status, response_status: responseStatus, error,
        occurred_at: expect.any(String), attempted_at: expect.any(String), duration_ms: expect.any(Number), next_attempt_at: next,
      },
      relationships: { webhook: { data: { type: 'webhook', id } } },
      links: { webhook: `${BASE}/webhooks/${id}` },
    });
    // Newest first: the refused event is due again, and refused again while the name answers loopback.
    const later = list.data.slice(0, -2).reverse().map((_: unknown, i: number) => attempt(i + 2, 'failed', null, REFUSED, expect.any(String)));
    expect(list).toEqual({
      links: { self: `${BASE}/webhooks/${id}/deliveries` },
      data: [...later.reverse(), attempt(1, 'failed', null, REFUSED, expect.any(String)), attempt(1, 'delivered', 204, null, null)],
      meta: { total: list.data.length },
    });
    await sleep(200);
    expect(good.at('/rebind')).toHaveLength(1);
    expect(refused.got).toEqual([]);
  });

  it('a name whose answers alternate never leads a delivery to the refused address: each attempt asks once and connects where that answer was judged', async () => {
    ns.answerA((n) => (n % 2 === 0 ? '127.0.0.2' : '127.0.0.1'));
    const id = await hookAt('/alternate');
    for (const name of ['_alt-1', '_alt-2', '_alt-3', '_alt-4']) await jobDone(t, token(), await postTxt(t, token(), x.end1.domain, name));
    // A consistent view: every question asked has its attempt recorded, and the receiver got each delivered one.
    const seen = await waitFor('every attempt recorded', async () => {
      const [list, questions, received] = [await attempts(id), ns.aQuestions(), good.at('/alternate').length];
      const outcomes: [string, number | null, string | null][] = list.data.map((d: any) => [d.attributes.status, d.attributes.response_status, d.attributes.error]);
      const delivered = outcomes.filter(([status]) => status === 'delivered').length;
      return outcomes.length >= 4 && outcomes.length === questions && delivered === received ? { outcomes, delivered } : null;
    });
    // Every other answer was loopback: some attempts were delivered, the others refused, each saying why.
    const failed = seen.outcomes.filter(([status]) => status === 'failed');
    expect(seen.delivered).toBeGreaterThan(0);
    expect(failed.length).toBeGreaterThan(0);
    expect(seen.outcomes).toEqual(expect.arrayContaining([['delivered', 204, null]]));
    expect(failed).toEqual(failed.map(() => ['failed', null, REFUSED]));
    // One question per attempt (checked above), so no second lookup on connecting, which would have
    // been answered 127.0.0.1 every other time; and nothing ever reached 127.0.0.1.
    await sleep(200);
    expect(refused.got).toEqual([]);
  });
});
