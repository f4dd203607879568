// `hostplane admin audit` (API guide "Audit events"), run in-process on each engine against a
// store whose events an API on it recorded: every customer's events and the refused
// authentications no customer sees, newest first; the filters with the API's rules and the
// options' names in their messages; a table for people, the API's attributes with --json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, testConfig } from '../helpers/app.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { auditRows, storeEvent, tokenIdOf } from '../helpers/audit-events.js';
import { buildAdmin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';

describe.each(ENGINES)('hostplane admin audit on %s', { timeout: 60_000 }, (engine) => {
  let db: TestDb;
  let x: Tenants;
  const env = () => ({ DATABASE_URL: db.url });
  const json = async (...args: string[]) => {
    const r = await runCli(['admin', 'audit', ...args, '--json'], env());
    expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout) as Record<string, unknown>[];
  };
  const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r.id));

  beforeAll(async () => {
    db = await newDatabase(engine);
    expect((await runCli(['migrate'], env())).code).toBe(0);
    x = await seedTenants(buildAdmin(serviceDeps(db.store, testConfig())));
    await storeEvent(db.store, { customer_id: Number(x.solo.customerId), created_at: '2026-01-02T12:00:00.000Z', path: '/ssh-keys', status: 409 });
    const api = await apiOn(db.store, BASE);
    try {
      const body = { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'cli', domain: x.end1.domain, data: 'v' } } };
      expect((await call(api.app, 'POST', '/dns-records', { token: x.end1.token, body })).status).toBe(202);
      expect((await call(api.app, 'POST', '/dns-records', { token: x.end2.token, body: { data: { type: 'dns-record', attributes: {} } } })).status).toBe(422);
      expect((await call(api.app, 'DELETE', '/ssh-keys/1', { token: 'hp_wrong' })).status).toBe(401);
    } finally {
      await api.close();
    }
  });
  afterAll(() => db?.drop());

  it('lists every event, newest first, with the attributes of the API; the refused authentication too', async () => {
    const stored = await auditRows(db);
    expect(stored).toHaveLength(4);
    const all = await json();
    expect(ids(all)).toEqual(stored.map((r) => r.id).reverse());
    const post = stored[1];
    expect(all[2]).toEqual({
      id: String(post.id), created_at: post.created_at, method: 'POST', path: '/dns-records', status: 202, customer_id: x.end1.customerId,
      contact_id: String(x.end1.contactId), token_id: String(await tokenIdOf(db.store, x.end1.contactId)), client_ip: '127.0.0.1',
      request_id: post.request_id, queue_job_id: String(post.queue_job_id), idempotency_key: null,
    });
    expect(all[0]).toMatchObject({ method: 'DELETE', path: '/ssh-keys/1', status: 401, customer_id: null, token_id: null, contact_id: null });
  });

  it('filters: --customer, --token, --status (codes and classes), --path, --since/--until, --limit', async () => {
    const stored = await auditRows(db);
    const [crafted, post, invalid, unauthenticated] = stored.map((r) => r.id);
    expect(ids(await json('--customer', x.end1.customerId))).toEqual([post]);
    expect(ids(await json('--token', String(await tokenIdOf(db.store, x.end2.contactId))))).toEqual([invalid]);
    expect(ids(await json('--status', '4xx'))).toEqual([unauthenticated, invalid, crafted]);
    expect(ids(await json('--status', '202, 401'))).toEqual([unauthenticated, post]);
    expect(ids(await json('--path', '/ssh-keys'))).toEqual([unauthenticated, crafted]);
    expect(ids(await json('--since', '2026-01-02', '--until', '2026-01-02T13:00:00+01:00'))).toEqual([]);
    expect(ids(await json('--since', '2026-01-02', '--until', '2026-01-02T14:00:00+01:00'))).toEqual([crafted]);
    expect(ids(await json('--limit', '2'))).toEqual([unauthenticated, invalid]);
    expect(ids(await json('--customer', '99999'))).toEqual([]);
  });

  it('prints a table for people', async () => {
    const r = await runCli(['admin', 'audit', '--customer', x.solo.customerId], env());
    expect(r).toEqual({ code: 0, stderr: '', stdout: expect.any(String) });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['id', 'created_at', 'status', 'method', 'path', 'customer_id', 'token_id', 'client_ip', 'queue_job_id']);
    expect(lines.slice(1).map((l) => l.split(/\s+/))).toEqual([[expect.any(String), '2026-01-02T12:00:00.000Z', '409', 'POST', '/ssh-keys', x.solo.customerId, '-', '192.0.2.1', '-']]);
  });

  it('a bad value names its option and changes nothing; a bad --limit is a usage error', async () => {
    const since = await runCli(['admin', 'audit', '--since', 'yesterday'], env());
    expect(since).toEqual({
      code: 1, stdout: '',
      stderr: 'hostplane: --since must be an ISO 8601 time such as 2026-11-22T03:51:28Z (or with an offset, +01:00) or a date such as 2026-11-22 (00:00 UTC).\n',
    });
    const status = await runCli(['admin', 'audit', '--status', '99', '--json'], env());
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stderr)).toEqual({ error: { code: 'invalid_parameter', message: '--status must be an HTTP status (100–599) or a class such as 4xx.' } });
    for (const limit of ['0', '100001', 'ten']) {
      const r = await runCli(['admin', 'audit', '--limit', limit, '--json'], env());
      expect(r.code, limit).toBe(1);
      expect(JSON.parse(r.stderr).error.code, limit).toBe('usage');
    }
  });
});
