// `hostplane admin webhook list [--customer]` and `reseal` (API guide "Webhooks"): the operator sees
// every customer's webhooks, or one customer's, with their state and never their secrets, and seals
// the secrets again under a new key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, testConfig } from '../helpers/app.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { createWebhook } from '../helpers/webhooks.js';
import { migrate } from '../../src/db/migrate.js';
import { buildAdmin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';
import { WebhooksRepository } from '../../src/resources/webhooks/webhooks.repository.js';
import { secretBox } from '../../src/security/secret-box.js';

describe.each(ENGINES)('hostplane admin webhook on %s', (engine) => {
  let db: TestDb;
  let x: Tenants;
  const secrets: string[] = [];
  const ids: string[] = [];

  beforeAll(async () => {
    db = await newDatabase(engine);
    await migrate(db.store);
    x = await seedTenants(buildAdmin(serviceDeps(db.store, testConfig())));
    const api = await apiOn(db.store, 'http://api.test');
    try {
      for (const [token, url] of [[x.end1.token, 'https://one.example.net/'], [x.solo.token, 'https://two.example.net/']]) {
        const r = await createWebhook(api, token, { url, events: ['queue-job.done', 'dns-record.created'] });
        secrets.push(r.json.data.attributes.secret);
        ids.push(r.json.data.id);
      }
    } finally {
      await api.close();
    }
  });
  afterAll(() => db?.drop());

  it('list: every webhook, or one customer\'s with --customer; a table for people; never a secret', async () => {
    const run = async (args: string[]) => {
      const r = await runCli(['admin', 'webhook', 'list', ...args], { DATABASE_URL: db.url });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      for (const s of secrets) expect(r.stdout).not.toContain(s.slice(6, 20));
      return r.stdout;
    };
    const row = (id: string, customerId: string, url: string) => ({
      id, customer_id: customerId, url, events: 'queue-job.done,dns-record.created', description: '', active: true, status: 'ok', failing_reason: null, created_at: expect.any(String),
    });
    expect(JSON.parse(await run(['--json']))).toEqual([row(ids[0], x.end1.customerId, 'https://one.example.net/'), row(ids[1], x.solo.customerId, 'https://two.example.net/')]);
    expect(JSON.parse(await run(['--customer', x.solo.customerId, '--json']))).toEqual([row(ids[1], x.solo.customerId, 'https://two.example.net/')]);
    const table = await run([]);
    expect(table).toMatch(/^id\s+customer_id\s+url\s+events\s+active\s+status\s+failing_reason\n/);
    expect(table).toContain('https://two.example.net/');
  });

  it('reseal: every secret sealed again with the first key of WEBHOOK_SECRET_KEY, the same secret; once is enough', async () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    const reseal = async () => {
      const r = await runCli(['admin', 'webhook', 'reseal', '--json'], { DATABASE_URL: db.url, WEBHOOK_SECRET_KEY: key });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      return JSON.parse(r.stdout);
    };
    expect(await reseal()).toEqual({ resealed: 2 });
    const rows = await db.store.db.selectFrom('webhooks').select(['id', 'secret']).orderBy('id').execute();
    const box = secretBox([key], await new WebhooksRepository(db.store.db).storeKey());
    expect(rows.map((w) => w.secret.split('.')[0])).toEqual([expect.stringMatching(/^k[0-9a-f]{12}$/), expect.stringMatching(/^k[0-9a-f]{12}$/)]);
    expect(rows.map((w) => box.open(w.secret))).toEqual(secrets);
    // Without the store's key now: the new key alone opens them.
    expect(rows.map((w) => secretBox([key], Buffer.alloc(32).toString('base64')).open(w.secret))).toEqual(secrets);
    expect(await reseal()).toEqual({ resealed: 0 });
  });
});
