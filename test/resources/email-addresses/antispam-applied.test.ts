// Done means live for antispam (API guide "E-mail addresses", "Queue jobs";
// docs/decisions/0019-maps-a-mail-server-has-applied.md), on both engines, with the mail server's
// rspamd played by a loop polling GET /internal/rspamd-settings as rspamd does and the mail
// server's doveadm by a driver that knows every address (asked once per job): a new address in a mode the settings map
// lists has its job done only once the server fetched that map and MAP_SPREAD_MS passed; one in
// `reject` (not in the map) does not wait; a server that never fetched the map holds nothing back;
// one that stopped fetching fails the job with the reason (here after one attempt). A PATCH of
// antispam that changes the map answers 200 only then; other PATCHes answer at once, and so does
// one whose server stopped fetching.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailDriver } from '../../../src/provisioning/mail/driver.js';
import { MAP_SILENT_MS, MAP_SPREAD_MS } from '../../../src/provisioning/mail/versioned-map.js';
import { mailReportKey } from '../../../src/provisioning/mail/servers.repository.js';
import { ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { patchEmail, placeholderMailServer, postEmail } from '../../helpers/email.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { pollUntil, sleep } from '../../helpers/wait.js';

/** How often the job asked doveadm about each address. */
const asked = new Map<string, number>();
/** doveadm and SMTP of a mail server that knows every address at once. */
const knowsAll: MailDriver = {
  authenticates: async (_server, address) => {
    asked.set(address, (asked.get(address) ?? 0) + 1);
    return true;
  },
  acceptsRecipient: async () => true,
  isGone: async () => true,
  removeMail: async () => {},
  quotaUsed: async () => new Map(),
  close: async () => {},
};

describe.each(ENGINES)('antispam applied by the mail server on %s', { timeout: 40_000 }, (engine) => {
  let t: TestApp;
  let x: Tenants;
  const authorization = `Basic ${Buffer.from(`mx-test:${mailReportKey('not-used')}`).toString('base64')}`;
  /** rspamd's requests: If-None-Match with the ETag it holds. */
  let etag = '';
  const fetchMap = async () => {
    const r = await t.app.inject({ method: 'GET', url: '/internal/rspamd-settings', headers: { authorization, ...(etag ? { 'if-none-match': etag } : {}) } });
    expect([200, 304]).toContain(r.statusCode);
    if (r.statusCode === 200) etag = String(r.headers.etag);
    return r;
  };
  /** Polls every 50 ms while `during` runs; answers what `during` did and when rspamd first got a new version. */
  const polled = async <T>(during: () => Promise<T>): Promise<{ result: T; fetchedNewAt: number | null }> => {
    let stop = false;
    let fetchedNewAt: number | null = null;
    const loop = (async () => {
      while (!stop) {
        if ((await fetchMap()).statusCode === 200 && fetchedNewAt === null) fetchedNewAt = Date.now();
        await sleep(50);
      }
    })();
    try {
      return { result: await during(), fetchedNewAt };
    } finally {
      stop = true;
      await loop;
    }
  };
  const job = async (url: string) => (await call(t.app, 'GET', url.replace(/^https?:\/\/[^/]+/, ''), { token: x.end1.token })).json.data.attributes;
  const post = async (local: string, antispam?: string) => {
    const r = await postEmail(t, x.end1.token, { address: `${local}@${x.end1.domain}`, address_type: 'mailbox', ...(antispam ? { antispam } : {}) });
    expect(r.status, r.body).toBe(202);
    return { id: r.json.data.id as string, job: String(r.headers['content-location']) };
  };
  const doneWithin = (url: string, ms: number) => pollUntil(() => job(url), (a) => a.status !== 'pending', `job ${url}`, ms);

  beforeAll(async () => {
    t = await createTestApp(engine, { JOB_POLL_MS: '50', JOB_MAX_ATTEMPTS: '1' }, { worker: true });
    t.drivers.mail = knowsAll;
    asked.clear();
    await placeholderMailServer(t.store);
    x = await seedTenants(t.admin);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('a server whose rspamd never fetched the map holds no job back', async () => {
    const a = await post('early', 'junk-folder');
    expect(await doneWithin(a.job, 3000)).toMatchObject({ status: 'done', error: null });
  });

  it('once rspamd fetches: a new junk-folder mailbox is done only after it has the map and MAP_SPREAD_MS passed', async () => {
    await fetchMap();
    const started = Date.now();
    const a = await post('junk', 'junk-folder');
    // Nobody polls: the job waits.
    await sleep(1500);
    expect(await job(a.job)).toMatchObject({ status: 'pending', error: null });
    const { result, fetchedNewAt } = await polled(() => doneWithin(a.job, 20_000));
    expect(result).toMatchObject({ status: 'done', error: null });
    expect(fetchedNewAt).not.toBeNull();
    expect(Date.now() - fetchedNewAt!).toBeGreaterThanOrEqual(MAP_SPREAD_MS - 100);
    expect(Date.now() - started).toBeGreaterThan(1500 + MAP_SPREAD_MS);
    // Its runs while it waited asked doveadm once.
    expect(asked.get(`junk@${x.end1.domain}`)).toBe(1);
  });

  it('a new mailbox in reject changes no map: its job does not wait for rspamd', async () => {
    const a = await post('plain');
    expect(await doneWithin(a.job, 3000)).toMatchObject({ status: 'done', error: null });
  });

  it('PATCH to a mode the map lists answers 200 only once rspamd has it; between mailbox modes (its Sieve script) at once', async () => {
    const a = await post('patched');
    await doneWithin(a.job, 3000);
    await fetchMap();
    const started = Date.now();
    const { result, fetchedNewAt } = await polled(() => patchEmail(t, x.end1.token, a.id, { antispam: 'junk-folder' }));
    expect(result.status, result.body).toBe(200);
    expect(result.json.data.attributes.antispam).toBe('junk-folder');
    expect(fetchedNewAt).not.toBeNull();
    expect(Date.now() - fetchedNewAt!).toBeGreaterThanOrEqual(MAP_SPREAD_MS - 100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(MAP_SPREAD_MS);

    for (const antispam of ['none', 'subject-rewrite']) {
      const quick = Date.now();
      const p = await patchEmail(t, x.end1.token, a.id, { antispam, description: antispam });
      expect(p.status, p.body).toBe(200);
      expect(p.json.data.attributes).toMatchObject({ antispam, description: antispam });
      expect(Date.now() - quick).toBeLessThan(1000);
    }
  });

  it('a server that stopped fetching: PATCH answers 200 at once with what is stored; a new address\'s job fails saying why', async () => {
    const old = new Date(Date.now() - MAP_SILENT_MS - 5000).toISOString();
    await t.store.db.updateTable('mail_map_versions').set({ fetched_at: old }).where('server', '=', 'mx-test').execute();
    const a = await post('silent-plain');
    await doneWithin(a.job, 3000);
    const quick = Date.now();
    const p = await patchEmail(t, x.end1.token, a.id, { antispam: 'junk-folder' });
    expect(p.status, p.body).toBe(200);
    expect(p.json.data.attributes.antispam).toBe('junk-folder');
    expect(Date.now() - quick).toBeLessThan(1000);

    const b = await post('silent', 'junk-folder');
    const failed = await doneWithin(b.job, 5000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain(`the antispam mode of silent@${x.end1.domain} is not live: mail server mx-test has not fetched its settings map since ${old}`);
  });
});
