// /packages (API guide "Packages", "Filters and paging", "Compatibility with existing clients",
// "Documents"): read-only; the whole document with related links, the scoped list, its filters and
// paging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';

describe.each(ENGINES)('packages on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  let extraPackageId: string;
  const created = async (id: string) => (await t.admin.repo.packages()).find((p) => String(p.id) === id)!.created_at;
  const get = (id: string, token = x.end1.token) => call(t.app, 'GET', `/packages/${id}`, { token });

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    // A second package of end1 on the reseller's own plan.
    const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId: Number(x.reseller.planId), name: 'end1 second', linuxUser: 'u_end1b' });
    extraPackageId = String(packageId);
  });
  afterAll(() => t.close());

  const expectedPackage = async (id: string, owner: string, planId: string, name: string, linuxUser: string) => {
    const related = (segment: string) => ({ links: { related: `${BASE}/${segment}?filter[package_id]=${id}` } });
    return {
      type: 'package',
      id,
      attributes: { name, linux_user: linuxUser, created_at: await created(id), sftp_host: null, sftp_port: null, sftp_user: linuxUser },
      relationships: {
        owner: { data: { type: 'customer', id: owner } },
        plan: { data: { type: 'plan', id: planId }, links: { related: `${BASE}/plans/${planId}` } },
        domains: related('domains'),
        'dns-records': related('dns-records'),
        databases: related('databases'),
        subdomains: related('subdomains'),
        'email-addresses': related('email-addresses'),
        'ssh-keys': related('ssh-keys'),
      },
      links: { self: `${BASE}/packages/${id}` },
    };
  };

  it('GET /packages/{id} answers the whole document, byte-exact (API guide "Packages")', async () => {
    const r = await get(x.end1.packageId);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const data = await expectedPackage(x.end1.packageId, x.end1.customerId, x.end1.planId, 'end1 package', 'u_end1');
    expect(r.body).toBe(JSON.stringify({ data, links: { self: `${BASE}/packages/${x.end1.packageId}` } }));
    // Related links carry raw brackets, as clients write filters (API guide "Compatibility with
    // existing clients").
    expect(r.body).toContain(`"related":"${BASE}/domains?filter[package_id]=${x.end1.packageId}"`);
    expect(data.attributes.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('the related links lead to the package\'s plan and domains', async () => {
    const r = await get(x.end1.packageId);
    const plan = await call(t.app, 'GET', r.json.data.relationships.plan.links.related.slice(BASE.length), { token: x.end1.token });
    expect(plan.status).toBe(200);
    expect(plan.json.data).toMatchObject({ type: 'plan', id: x.end1.planId });
    const domains = await call(t.app, 'GET', r.json.data.relationships.domains.links.related.slice(BASE.length), { token: x.end1.token });
    expect(domains.status).toBe(200);
    expect(domains.json.data.map((d: any) => d.id)).toEqual(['end1.example']);
  });

  it('every related link of a package leads to a list that answers 200 (no link to a missing endpoint)', async () => {
    const r = await get(x.end1.packageId);
    const related = Object.values(r.json.data.relationships as Record<string, { links?: { related: string } }>).flatMap((rel) => rel.links?.related ?? []);
    expect(related.length).toBeGreaterThanOrEqual(3);
    for (const url of related) {
      const answer = await call(t.app, 'GET', url.slice(BASE.length), { token: x.end1.token });
      expect([url, answer.status]).toEqual([url, 200]);
    }
  });

  it('GET /packages lists the scope ordered by id, links first (API guide "Compatibility with existing clients", "Documents")', async () => {
    const r = await call(t.app, 'GET', '/packages', { token: x.end1.token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      links: { self: `${BASE}/packages` },
      data: [
        await expectedPackage(x.end1.packageId, x.end1.customerId, x.end1.planId, 'end1 package', 'u_end1'),
        await expectedPackage(extraPackageId, x.end1.customerId, x.reseller.planId, 'end1 second', 'u_end1b'),
      ],
      meta: { total: 2 },
    });
    const reseller = await call(t.app, 'GET', '/packages', { token: x.reseller.token });
    expect(reseller.json.data.map((p: any) => p.id)).toEqual([x.reseller.packageId, x.end1.packageId, x.end2.packageId, extraPackageId]);
    const solo = await call(t.app, 'GET', '/packages', { token: x.solo.token });
    expect(solo.json.data.map((p: any) => p.id)).toEqual([x.solo.packageId]);
  });

  const ids = async (query: string, token = x.reseller.token) => {
    const r = await call(t.app, 'GET', `/packages?${query}`, { token });
    expect(r.status).toBe(200);
    expect(r.json.links.self).toBe(`${BASE}/packages?${query}`);
    expect(r.json.meta.total).toBe(r.json.data.length);
    return r.json.data.map((p: any) => p.id);
  };

  it('filter[owner_id], filter[plan_id], filter[linux_user]: OR within, AND across (API guide "Filters and paging", "Packages")', async () => {
    expect(await ids(`filter[owner_id]=${x.end1.customerId}`)).toEqual([x.end1.packageId, extraPackageId]);
    expect(await ids(`filter[owner_id]=${x.end2.customerId},${x.reseller.customerId}`)).toEqual([x.reseller.packageId, x.end2.packageId]);
    expect(await ids(`filter[plan_id]=${x.resellerPlanId}`)).toEqual([x.end1.packageId, x.end2.packageId]);
    expect(await ids(`filter[plan_id]=${x.reseller.planId}`)).toEqual([x.reseller.packageId, extraPackageId]);
    expect(await ids('filter[linux_user]=u_end2')).toEqual([x.end2.packageId]);
    expect(await ids('filter[linux_user]=u_end2&filter[linux_user]=u_end1b')).toEqual([x.end2.packageId, extraPackageId]);
    expect(await ids(`filter[plan_id]=${x.reseller.planId}&filter[owner_id]=${x.end1.customerId}`)).toEqual([extraPackageId]);
    expect(await ids(`filter[plan_id]=${x.resellerPlanId}&filter[linux_user]=u_end1b`)).toEqual([]);
    expect(await ids('filter[linux_user]=U_END2')).toEqual([]);
    expect(await ids('filter[plan_id]=x&filter[owner_id]=99999999999')).toEqual([]);
  });

  it('an unknown filter → 400 invalid_parameter naming the allowed ones', async () => {
    const r = await call(t.app, 'GET', '/packages?filter[package_id]=1', { token: x.end1.token });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      errors: [
        {
          id: 'invalid_parameter',
          status: '400',
          title: 'Invalid query parameter',
          detail: 'Unknown filter package_id; allowed: owner_id, plan_id, linux_user.',
          source: { parameter: 'filter[package_id]' },
        },
      ],
      links: { self: `${BASE}/packages?filter[package_id]=1` },
    });
  });

  it('pages with page[size]/page[number] (API guide "Filters and paging")', async () => {
    const r = await call(t.app, 'GET', '/packages?page[number]=3&page[size]=1', { token: x.reseller.token });
    const link = (n: number) => `${BASE}/packages?page[number]=${n}&page[size]=1`;
    expect(r.json.links).toEqual({ self: link(3), first: link(1), last: link(4), prev: link(2), next: link(4) });
    expect(r.json.data.map((p: any) => p.id)).toEqual([x.end2.packageId]);
    expect(r.json.meta).toEqual({ total: 4, page: { number: 3, size: 1, total_pages: 4 } });
  });

  it.each([['unknown', '999999'], ['not a number', 'abc'], ['zero', '0'], ['beyond 32 bits', '99999999999'], ['signed', '-1']])(
    'GET /packages/{id} %s → 404 resource_not_found',
    async (_n, id) => {
      const r = await get(id);
      expect(r.status).toBe(404);
      expect(r.json).toEqual({
        errors: [{ id: 'resource_not_found', status: '404', title: 'Resource not found', detail: 'No such package.' }],
        links: { self: `${BASE}/packages/${id}` },
      });
    },
  );

  it.each(['PATCH', 'DELETE', 'POST'] as const)('%s is not allowed: packages are read-only (API guide "Packages")', async (method) => {
    const url = method === 'POST' ? '/packages' : `/packages/${x.end1.packageId}`;
    const r = await call(t.app, method, url, { token: x.end1.token, body: { data: { type: 'package', id: x.end1.packageId, attributes: { name: 'x' } } } });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
    expect(r.json.errors[0]).toMatchObject({ id: 'method_not_allowed', status: '405' });
    expect((await get(x.end1.packageId)).json.data.attributes.name).toBe('end1 package');
  });
});
