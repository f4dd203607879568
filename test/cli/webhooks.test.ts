// `hostplane admin webhook list [--customer]` (API guide "Webhooks"): the operator sees every
// customer's webhooks, or one customer's, with their state and never their secrets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, testConfig } from '../helpers/app.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { createWebhook } from '../helpers/webhooks.js';
import { migrate } from '../../src/db/migrate.js';
import { buildAdmin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';

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
});
