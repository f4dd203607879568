// Tenancy sweep (API guide "Authentication", "Errors"): every GET-one and PATCH with other tenants'
// ids answers 404 and changes nothing; lists and filters never show a foreign object; a reseller
// does see its end customers' objects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../helpers/app.js';
import { notFoundAt } from '../helpers/errors.js';
import { seedTenants, type Tenant, type Tenants } from '../helpers/tenants.js';
import { QueueRepository } from '../../src/queue/queue.repository.js';
import { nowIso } from '../../src/db/time.js';
import { DatabaseServersRepository } from '../../src/provisioning/databases/servers.repository.js';
import { DatabasesRepository } from '../../src/resources/databases/databases.repository.js';
import { SubdomainsRepository } from '../../src/resources/subdomains/subdomains.repository.js';
import { EmailAddressesRepository } from '../../src/resources/email-addresses/email-addresses.repository.js';
import { MailDirectoryRepository } from '../../src/resources/email-addresses/email-addresses.mail-directory.repository.js';
import { placeholderMailServer } from '../helpers/email.js';

type Key = 'reseller' | 'end1' | 'end2' | 'solo';
type Kind = 'customers' | 'domains' | 'packages' | 'plans' | 'queue-jobs' | 'databases' | 'subdomains' | 'email-addresses';
const KINDS: Kind[] = ['customers', 'domains', 'packages', 'plans', 'queue-jobs', 'databases', 'subdomains', 'email-addresses'];
const WHAT: Record<Kind, string> = {
  customers: 'customer', domains: 'domain', packages: 'package', plans: 'plan', 'queue-jobs': 'queue-job', databases: 'database', subdomains: 'subdomain',
  'email-addresses': 'email-address',
};
/** Kinds whose objects a customer may change with PATCH (the others are read-only: 405). */
const WRITABLE = new Set<Kind>(['customers', 'domains', 'databases', 'subdomains', 'email-addresses']);

// attacker → victim: customer ↔ customer, end customer → sibling, end customer → its reseller,
// and the reseller → a customer that is not its own.
const PAIRS: [Key, Key][] = [
  ['solo', 'end1'],
  ['end1', 'solo'],
  ['end1', 'end2'],
  ['end2', 'end1'],
  ['end1', 'reseller'],
  ['end2', 'reseller'],
  ['solo', 'reseller'],
  ['reseller', 'solo'],
];

describe.each(ENGINES)('tenancy sweep on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  /** The objects each tenant owns, per resource kind (ids as they appear in URLs). */
  const owned = {} as Record<Key, Record<Kind, string[]>>;
  const pendingJob = {} as Record<Key, string>;
  /** Per e-mail address id: one of its forwarding targets and (mailboxes) its application password's id. */
  const mail = {} as Record<string, { target: string; appPassword?: string }>;
  let unusedSoldPlanId: string;
  const tenant = (k: Key): Tenant => x[k];

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    unusedSoldPlanId = String((await t.admin.packages.createPlan({ name: 'sold, unused', resellerId: Number(x.reseller.customerId) })).planId);
    const jobs = new QueueRepository(t.store.db);
    // Database rows as POST /databases stores them; no worker runs, so the server is never contacted.
    await new DatabaseServersRepository(t.store.db).add({
      name: 'db1', db_type: 'mariadb', version: '10.11', url: 'mysql://admin@127.0.0.1:9', access_hosts: '["%"]', is_default: 1, is_dedicated: 0, created_at: nowIso(),
    });
    const databases = new DatabasesRepository(t.store.db);
    // Subdomain rows as POST /subdomains stores them; no worker runs, so no web server is contacted.
    const subdomains = new SubdomainsRepository(t.store.db);
    // E-mail addresses as POST /email-addresses stores them (row, mail directory), live, without the
    // create job that would show in the job lists: a mailbox with a target and an application
    // password, and a forward. No worker runs, so the mail server is never contacted.
    await placeholderMailServer(t.store);
    const addresses = new EmailAddressesRepository(t.store.db);
    const directory = new MailDirectoryRepository(t.store.db);
    const addAddress = async (k: Key, local: string, kind: 'mailbox' | 'forward', target: string) => {
      const domain = tenant(k).domain;
      const address = `${local}@${domain}`;
      const row = await addresses.insert({
        customer_id: Number(tenant(k).customerId), package_id: Number(tenant(k).packageId), mail_server_name: 'mx-test', address, domain, zone: domain, kind,
        description: null, antispam: 'reject', forward_to: JSON.stringify([target]), quota_bytes: kind === 'mailbox' ? 1024 * 1024 * 1024 : null,
      });
      await addresses.update(row.id, { state: 'live' });
      await directory.addDomain(domain, 'mx-test');
      const id = String(row.id);
      mail[id] = { target };
      if (kind === 'mailbox') {
        await directory.addUser({ address, domain, passwordHash: '{BLF-CRYPT}$2b$10$notarealhashnotarealhashnotarealhashnotarealhashnot', quotaBytes: 1024 * 1024 * 1024, recipientsPerHour: 500, server: 'mx-test' });
        await directory.setAliases(address, [address, target], 'mx-test');
        mail[id].appPassword = String((await directory.addAppPassword({ address, secretSha256: '0'.repeat(64), device: 'Laptop', application: 'Thunderbird' })).id);
      } else {
        await directory.setAliases(address, [target], 'mx-test');
      }
      return id;
    };
    for (const k of ['reseller', 'end1', 'end2', 'solo'] as Key[]) {
      const customerId = Number(tenant(k).customerId);
      pendingJob[k] = String((await jobs.insert({ customerId, jobType: 'dns-record', action: 'create', objectId: `${k}-rec` })).id);
      const done = String((await jobs.insert({ customerId, jobType: 'database', action: 'delete', objectId: `${k}-db`, status: 'done', finishedAt: nowIso(-60_000) })).id);
      const failed = String((await jobs.insert({ customerId, jobType: 'subdomain', action: 'update', objectId: `${k}-sub`, status: 'failed', error: 'boom', finishedAt: nowIso() })).id);
      owned[k] = {
        customers: [tenant(k).customerId],
        domains: [tenant(k).domain],
        packages: [tenant(k).packageId],
        plans: [tenant(k).planId],
        'queue-jobs': [pendingJob[k], done, failed],
        databases: [
          String((await databases.insert({
            customer_id: customerId, package_id: Number(tenant(k).packageId), server_name: 'db1', db_type: 'mariadb', version: '10.11', name: `u_${k}_1`, description: '',
          })).id),
        ],
        subdomains: [
          String((await subdomains.insert({
            customer_id: customerId, package_id: Number(tenant(k).packageId), domain: tenant(k).domain, name: 'blog', description: '',
            kind: 'redirect', webspace_path: null, php_version: null, webspace_https: 0, redirect_target: 'https://example.com/', redirect_dynamic: 0, redirect_https: 0,
          })).id),
        ],
        'email-addresses': [
          await addAddress(k, 'info', 'mailbox', `copy@${tenant(k).domain}`),
          await addAddress(k, 'sales', 'forward', `info@${tenant(k).domain}`),
        ],
      };
    }
    owned.reseller.plans.push(x.resellerPlanId, unusedSoldPlanId);
  });
  afterAll(() => t.close());

  /** What `k` may see of one kind: its own objects and, for the reseller, its end customers'. */
  const visible = (k: Key, kind: Kind) => {
    const keys: Key[] = k === 'reseller' ? ['reseller', 'end1', 'end2'] : [k];
    return new Set(keys.flatMap((o) => owned[o][kind]));
  };

  const notFound = (url: string, kind: Kind) => notFoundAt(BASE + url, WHAT[kind]);

  const patchBody = (kind: Kind, id: string) =>
    kind === 'customers'
      ? { data: { type: 'customer', id, attributes: { is_login_disabled: true, external_customer_id: 'hijacked' } } }
      : kind === 'domains'
        ? { data: { type: 'domain', id, attributes: { presence: { dns_update_lock: true, dns_migration_mode: { enabled: true } } } } }
        : kind === 'databases'
          ? { data: { type: 'database', id, attributes: { description: 'hijacked' } } }
          : kind === 'subdomains'
            ? { data: { type: 'subdomain', id, attributes: { redirect: { target: 'https://hijacked.example/' } } } }
            : kind === 'email-addresses'
              ? { data: { type: 'email-address', id, attributes: { description: 'hijacked' } } }
              : { data: { type: WHAT[kind], id, attributes: { name: 'hijacked' } } };

  /**
   * The requests on an address's own endpoints beyond GET and PATCH: a new password, DELETE, its
   * forwarding targets and its application passwords, each with what it should have done.
   */
  const addressWrites = (url: string, id: string): [string, string, unknown?][] => [
    ['POST', `${url}/password`],
    ['DELETE', url],
    ['POST', `${url}/forward-to/hijacked@attacker.example`],
    ['DELETE', `${url}/forward-to/${mail[id].target}`],
    ['GET', `${url}/application-passwords`],
    ['POST', `${url}/application-passwords`, { data: { type: 'application-password', attributes: { device: 'Phone', application: 'Hijack' } } }],
    ['DELETE', `${url}/application-passwords/${mail[id].appPassword ?? '1'}`],
  ];

  /** Every object of `victim` as its owner reads it. */
  const snapshot = async (victim: Key) => {
    const out: Record<string, string> = {};
    for (const kind of KINDS) {
      for (const id of owned[victim][kind]) {
        const url = `/${kind}/${id}`;
        const r = await call(t.app, 'GET', url, { token: tenant(victim).token });
        // The reseller's sold plan without a package is visible to it alone, still its object.
        expect(r.status, url).toBe(200);
        out[url] = r.body;
        if (kind === 'email-addresses') {
          const apps = await call(t.app, 'GET', `${url}/application-passwords`, { token: tenant(victim).token });
          expect(apps.status, `${url}/application-passwords`).toBe(200);
          out[`${url}/application-passwords`] = apps.body;
        }
      }
    }
    return out;
  };

  const jobCount = async () => (await t.store.db.selectFrom('queue_jobs').select('id').execute()).length;

  it.each(PAIRS)('%s → %s: GET one and PATCH of every resource answer 404, data unchanged', async (attacker, victim) => {
    const before = await snapshot(victim);
    const jobsBefore = await jobCount();
    const mine = visible(attacker, 'plans');
    let checked = 0;
    for (const kind of KINDS) {
      for (const id of owned[victim][kind]) {
        // end1 and end2 share the reseller's plan: it is each one's own plan, not a foreign one.
        if (mine.has(id) && kind === 'plans') continue;
        const url = `/${kind}/${id}`;
        const g = await call(t.app, 'GET', url, { token: tenant(attacker).token });
        expect(g.status, `GET ${url}`).toBe(404);
        expect(g.json, `GET ${url}`).toEqual(notFound(url, kind));
        const p = await call(t.app, 'PATCH', url, { token: tenant(attacker).token, body: patchBody(kind, id) });
        if (WRITABLE.has(kind)) {
          expect(p.status, `PATCH ${url}`).toBe(404);
          expect(p.json, `PATCH ${url}`).toEqual(notFound(url, kind));
        } else {
          // Read-only resources: 405 whether the object is foreign or not (no existence leak).
          const own = `/${kind}/${owned[attacker][kind][0]}`;
          const o = await call(t.app, 'PATCH', own, { token: tenant(attacker).token, body: patchBody(kind, owned[attacker][kind][0]) });
          expect(p.status, `PATCH ${url}`).toBe(405);
          expect(p.json.errors, `PATCH ${url}`).toEqual(o.json.errors);
        }
        if (kind === 'databases') {
          // The job-backed writes on a database: a new password and DELETE.
          const pw = await call(t.app, 'POST', `${url}/password`, { token: tenant(attacker).token });
          expect(pw.json, `POST ${url}/password`).toEqual(notFound(`${url}/password`, kind));
          const d = await call(t.app, 'DELETE', url, { token: tenant(attacker).token });
          expect(d.json, `DELETE ${url}`).toEqual(notFound(url, kind));
        }
        if (kind === 'subdomains') {
          const d = await call(t.app, 'DELETE', url, { token: tenant(attacker).token });
          expect(d.json, `DELETE ${url}`).toEqual(notFound(url, kind));
        }
        if (kind === 'email-addresses') {
          // A foreign forward answers 404 too, not the 409 a forward's password would (no existence leak).
          for (const [method, at, body] of addressWrites(url, id)) {
            const r = await call(t.app, method as 'GET', at, { token: tenant(attacker).token, body });
            expect(r.json, `${method} ${at}`).toEqual(notFound(at, kind));
          }
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(9);
    expect(await snapshot(victim)).toEqual(before);
    expect(await jobCount()).toBe(jobsBefore);
  });

  it('an unknown id answers exactly like a foreign one (no existence leak)', async () => {
    for (const [kind, unknown] of [['customers', '99999'], ['domains', 'nobody.example'], ['packages', '99999'], ['plans', '99999'], ['queue-jobs', '99999'], ['databases', '99999'], ['subdomains', '99999'], ['email-addresses', '99999']] as [Kind, string][]) {
      const url = `/${kind}/${unknown}`;
      const r = await call(t.app, 'GET', url, { token: x.end1.token });
      expect(r.json).toEqual(notFound(url, kind));
    }
    // The address endpoints beyond GET: an unknown address answers as a foreign one does.
    mail['99999'] = { target: 'copy@end1.example' };
    for (const [method, at, body] of addressWrites('/email-addresses/99999', '99999')) {
      const r = await call(t.app, method as 'GET', at, { token: x.end1.token, body });
      expect(r.json, `${method} ${at}`).toEqual(notFound(at, 'email-addresses'));
    }
  });

  it.each(['reseller', 'end1', 'end2', 'solo'] as Key[])('lists of %s hold exactly its scope, never a foreign object', async (k) => {
    for (const kind of KINDS) {
      const r = await call(t.app, 'GET', `/${kind}`, { token: tenant(k).token });
      expect(r.status, kind).toBe(200);
      const ids: string[] = r.json.data.map((o: any) => o.id);
      // The job list holds pending jobs only (API guide "Queue jobs").
      const expected = kind === 'queue-jobs' ? [...visible(k, kind)].filter((id) => Object.values(pendingJob).includes(id)) : [...visible(k, kind)];
      expect(new Set(ids), kind).toEqual(new Set(expected));
      expect(ids.length, kind).toBe(expected.length);
    }
  });

  it.each(PAIRS)('%s filtering by %s\'s ids gets empty lists, not foreign rows', async (attacker, victim) => {
    const v = tenant(victim);
    const a = tenant(attacker);
    const queries = [
      `/domains?filter[owner_id]=${v.customerId}`,
      `/domains?filter[package_id]=${v.packageId}`,
      `/domains?filter[owner_id]=${v.customerId}&filter[package_id]=${v.packageId}`,
      `/packages?filter[owner_id]=${v.customerId}`,
      `/packages?filter[linux_user]=u_${victim}`,
      `/databases?filter[package_id]=${v.packageId}`,
      `/subdomains?filter[package_id]=${v.packageId}`,
      `/subdomains?filter[domain]=${v.domain}`,
      `/email-addresses?filter[package_id]=${v.packageId}`,
      `/email-addresses?filter[domain]=${v.domain}`,
      `/email-addresses?filter[address]=info@${v.domain},SALES@${v.domain.toUpperCase()}`,
      ...(visible(attacker, 'plans').has(v.planId) ? [] : [`/packages?filter[plan_id]=${v.planId}`]),
    ];
    for (const url of queries) {
      const r = await call(t.app, 'GET', url, { token: a.token });
      expect(r.status, url).toBe(200);
      expect(r.json, url).toEqual({ links: { self: BASE + url }, data: [], meta: { total: 0 } });
    }
    // Mixed with an own id, only the own rows come back.
    const mixed = await call(t.app, 'GET', `/domains?filter[owner_id]=${v.customerId},${a.customerId}`, { token: a.token });
    expect(mixed.json.data.map((d: any) => d.id)).toEqual([a.domain]);
  });

  it("a reseller reads every object of its end customers and changes their customer record and domain", async () => {
    for (const k of ['end1', 'end2'] as Key[]) {
      for (const kind of KINDS) {
        for (const id of owned[k][kind]) {
          const url = `/${kind}/${id}`;
          const r = await call(t.app, 'GET', url, { token: x.reseller.token });
          expect(r.status, url).toBe(200);
          expect(r.json.data.id, url).toBe(id);
        }
      }
    }
    const d = await call(t.app, 'PATCH', `/domains/${x.end2.domain}`, {
      token: x.reseller.token,
      body: { data: { type: 'domain', id: x.end2.domain, attributes: { presence: { dns_update_lock: true } } } },
    });
    expect(d.status).toBe(200);
    const c = await call(t.app, 'PATCH', `/customers/${x.end2.customerId}`, {
      token: x.reseller.token,
      body: { data: { type: 'customer', id: x.end2.customerId, attributes: { external_customer_id: 'crm-2' } } },
    });
    expect(c.status).toBe(200);
    expect((await call(t.app, 'GET', `/domains/${x.end2.domain}`, { token: x.end2.token })).json.data.attributes.presence.dns_update_lock).toBe(true);
    expect((await call(t.app, 'GET', `/customers/${x.end2.customerId}`, { token: x.end2.token })).json.data.attributes.external_customer_id).toBe('crm-2');
  });

  it("a reseller reads and changes its end customers' application passwords and forwarding targets", async () => {
    for (const k of ['end1', 'end2'] as Key[]) {
      const [mailbox] = owned[k]['email-addresses'];
      const url = `/email-addresses/${mailbox}`;
      const as = { token: x.reseller.token };
      const apps = await call(t.app, 'GET', `${url}/application-passwords`, as);
      expect(apps.status).toBe(200);
      expect(apps.json.data.map((a: any) => a.id)).toEqual([mail[mailbox].appPassword]);
      const made = await call(t.app, 'POST', `${url}/application-passwords`, {
        ...as, body: { data: { type: 'application-password', attributes: { device: 'Tablet', application: 'K-9 Mail' } } },
      });
      expect(made.status, made.body).toBe(201);
      expect((await call(t.app, 'DELETE', `${url}/application-passwords/${made.json.data.id}`, as)).status).toBe(204);
      const target = `extra@${tenant(k).domain}`;
      expect((await call(t.app, 'POST', `${url}/forward-to/${target}`, as)).status).toBe(204);
      expect((await call(t.app, 'GET', url, { token: tenant(k).token })).json.data.attributes.forward_to).toEqual([mail[mailbox].target, target]);
      expect((await call(t.app, 'DELETE', `${url}/forward-to/${target}`, as)).status).toBe(204);
      expect((await call(t.app, 'GET', url, { token: tenant(k).token })).json.data.attributes.forward_to).toEqual([mail[mailbox].target]);
      // What the end customer sees is what the reseller left.
      expect((await call(t.app, 'GET', `${url}/application-passwords`, { token: tenant(k).token })).json.data.map((a: any) => a.id)).toEqual([mail[mailbox].appPassword]);
    }
  });
});
