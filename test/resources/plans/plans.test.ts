// /plans (API guide "Plans", "Filters and paging"): read-only; visible are the plans of the
// caller's packages and, for a reseller, the plans it sells.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';

describe.each(ENGINES)('plans on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  let customPlanId: string;
  let unusedSoldPlanId: string;
  let orphanPlanId: string;
  const get = (id: string, token = x.end1.token) => call(t.app, 'GET', `/plans/${id}`, { token });
  const listIds = async (token: string) => {
    const r = await call(t.app, 'GET', '/plans', { token });
    expect(r.status).toBe(200);
    expect(r.json.meta).toEqual({ total: r.json.data.length });
    return r.json.data.map((p: any) => p.id);
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    const custom = await t.admin.packages.createPlan({
      name: 'Pro 2025',
      maxDatabases: 12,
      maxEmailAddresses: 300,
      mailboxQuotaMb: 4096,
      maxSubdomains: 40,
      webspaceMb: 51200,
      databaseVersions: ['mariadb-10.11', 'mysql-8.0'],
      phpVersions: ['8.2', '8.3'],
      recipientsPerHour: 250,
    });
    customPlanId = String(custom.planId);
    await t.admin.packages.createPackage({ customerId: Number(x.solo.customerId), planId: custom.planId, name: 'solo pro', linuxUser: 'u_solo_pro' });
    // Sold by the reseller, not (yet) used by any package.
    unusedSoldPlanId = String((await t.admin.packages.createPlan({ name: 'reseller unused', resellerId: Number(x.reseller.customerId) })).planId);
    // Nobody's: neither sold nor used.
    orphanPlanId = String((await t.admin.packages.createPlan({ name: 'orphan' })).planId);
  });
  afterAll(() => t.close());

  it('GET /plans/{id} answers the whole document, attributes in order, byte-exact (API guide "Plans")', async () => {
    const r = await get(customPlanId, x.solo.token);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toBe(
      JSON.stringify({
        data: {
          type: 'plan',
          id: customPlanId,
          attributes: {
            name: 'Pro 2025',
            max_databases: 12,
            max_email_addresses: 300,
            mailbox_quota_mb: 4096,
            max_subdomains: 40,
            database_versions: ['mariadb-10.11', 'mysql-8.0'],
            php_versions: ['8.2', '8.3'],
            webspace_mb: 51200,
            recipients_per_hour: 250,
            ssh_keys_per_package: 10,
          },
          links: { self: `${BASE}/plans/${customPlanId}` },
        },
        links: { self: `${BASE}/plans/${customPlanId}` },
      }),
    );
  });

  it('an end customer sees the plans of its packages only', async () => {
    expect(await listIds(x.end1.token)).toEqual([x.resellerPlanId]);
    for (const id of [x.reseller.planId, unusedSoldPlanId, x.solo.planId, customPlanId, orphanPlanId]) {
      const r = await get(id);
      expect(r.status).toBe(404);
      expect(r.json).toEqual({
        errors: [{ id: 'resource_not_found', status: '404', title: 'Resource not found', detail: 'No such plan.' }],
        links: { self: `${BASE}/plans/${id}` },
      });
    }
  });

  it("a reseller sees its own packages' plans, its end customers' plans and the plans it sells, once each", async () => {
    expect(await listIds(x.reseller.token)).toEqual([x.reseller.planId, x.resellerPlanId, unusedSoldPlanId]);
    expect((await get(unusedSoldPlanId, x.reseller.token)).json.data).toMatchObject({ type: 'plan', id: unusedSoldPlanId, attributes: { name: 'reseller unused' } });
    for (const id of [x.solo.planId, customPlanId, orphanPlanId]) expect((await get(id, x.reseller.token)).status).toBe(404);
  });

  it('a customer with two packages sees both plans; nobody sees an unused, unsold plan', async () => {
    expect(await listIds(x.solo.token)).toEqual([x.solo.planId, customPlanId]);
    const r = await call(t.app, 'GET', '/plans', { token: x.solo.token });
    expect(r.json.data[0]).toEqual((await get(x.solo.planId, x.solo.token)).json.data);
    expect(r.json.data[0].attributes).toEqual({
      name: 'solo plan',
      max_databases: 5,
      max_email_addresses: 50,
      mailbox_quota_mb: 2048,
      max_subdomains: 20,
      database_versions: ['mariadb-10.11'],
      php_versions: ['8.3', '8.4', '8.5'],
      webspace_mb: 10240,
      recipients_per_hour: 500,
      ssh_keys_per_package: 10,
    });
    for (const token of [x.solo.token, x.end1.token, x.end2.token, x.reseller.token]) expect((await get(orphanPlanId, token)).status).toBe(404);
  });

  it('no filters: any filter → 400 invalid_parameter (API guide "Plans")', async () => {
    const r = await call(t.app, 'GET', '/plans?filter[name]=orphan', { token: x.end1.token });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      errors: [{ id: 'invalid_parameter', status: '400', title: 'Invalid query parameter', detail: 'This list has no filters.', source: { parameter: 'filter[name]' } }],
      links: { self: `${BASE}/plans?filter[name]=orphan` },
    });
  });

  it('pages (API guide "Filters and paging")', async () => {
    const r = await call(t.app, 'GET', '/plans?page[size]=2', { token: x.reseller.token });
    expect(r.json.links).toEqual({
      self: `${BASE}/plans?page[size]=2`,
      first: `${BASE}/plans?page[number]=1&page[size]=2`,
      last: `${BASE}/plans?page[number]=2&page[size]=2`,
      prev: null,
      next: `${BASE}/plans?page[number]=2&page[size]=2`,
    });
    expect(r.json.data.map((p: any) => p.id)).toEqual([x.reseller.planId, x.resellerPlanId]);
    expect(r.json.meta).toEqual({ total: 3, page: { number: 1, size: 2, total_pages: 2 } });
  });

  it.each(['abc', '99999999999', '0', '1.0'])('GET /plans/%s → 404', async (id) => {
    const r = await get(id);
    expect(r.status).toBe(404);
    expect(r.json.errors[0]).toMatchObject({ id: 'resource_not_found', detail: 'No such plan.' });
  });

  it('PATCH is not allowed: plans are read-only (API guide "Plans")', async () => {
    const r = await call(t.app, 'PATCH', `/plans/${x.end1.planId}`, { token: x.end1.token, body: { data: { type: 'plan', id: x.end1.planId, attributes: { max_databases: 99 } } } });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
    expect((await get(x.end1.planId)).json.data.attributes.max_databases).toBe(5);
  });
});
