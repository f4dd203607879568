// Base records (API guide "DNS records"): a presence domain's template records and managed DKIM
// key, plan templates checked by the API rules, and `admin package set-plan` resetting base records
// (keeping custom and managed ones, respecting dns_update_lock and delegation cuts).
import crypto from 'node:crypto';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, type EngineName, type TestApp, type TestStore } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { DKIM, dnsRecordsSuite, record, recordIdOf } from '../../helpers/dns-records.js';
import { EnvSchema } from '../../../src/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const { post, list, idsOf } = dnsRecordsSuite(engine, (a) => ({ t, x } = a));

  describe('base records (API guide "DNS records")', () => {
    it('a new presence domain has the default template records and a managed DKIM key, served at once', async () => {
      const ids = await idsOf('end1.example');
      const r = await list('?filter[domain]=end1.example');
      expect(r.status).toBe(200);
      const dkim = r.json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(dkim.attributes.data).toMatch(DKIM);
      const d = 'end1.example';
      expect(r.json).toEqual({
        links: { self: `${BASE}/dns-records?filter[domain]=end1.example` },
        data: [
          record(ids['A '], { record_type: 'A', domain: d, data: '192.0.2.10', tag: 'base' }),
          record(ids['AAAA '], { record_type: 'AAAA', domain: d, data: '2001:db8::10', tag: 'base' }),
          record(ids['MX '], { record_type: 'MX', domain: d, data: '10 mail.hostplane.test', tag: 'base' }),
          record(ids['TXT '], { record_type: 'TXT', domain: d, data: 'v=spf1 a mx ~all', tag: 'base' }),
          record(ids['TXT default._domainkey'], { record_type: 'TXT', name: 'default._domainkey', domain: d, data: dkim.attributes.data, tag: 'managed' }),
          record(ids['A www'], { record_type: 'A', name: 'www', domain: d, data: '192.0.2.10', tag: 'base' }),
          record(ids['AAAA www'], { record_type: 'AAAA', name: 'www', domain: d, data: '2001:db8::10', tag: 'base' }),
        ],
        meta: { total: 7 },
      });
      // Written active, with a DNS change in the domain's transaction: the zone is served from the start.
      const states = await t.store.db.selectFrom('dns_records').select('state').distinct().where('domain', '=', d).execute();
      expect(states).toEqual([{ state: 'active' }]);
      const changes = await t.store.db.selectFrom('dns_changes').select('domain').where('domain', '=', d).execute();
      expect(changes).toEqual([{ domain: d }]);
    });

    it('the DKIM TXT publishes an RSA 2048 key whose private half is kept for signing (selector default, signing)', async () => {
      const r = await list('?filter[domain]=end2.example', x.end2.token);
      const txtData = r.json.data.find((d: any) => d.attributes.name === 'default._domainkey').attributes.data;
      const pub = crypto.createPublicKey({ key: Buffer.from(DKIM.exec(txtData)![1], 'base64'), format: 'der', type: 'spki' });
      expect(pub.asymmetricKeyType).toBe('rsa');
      expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
      const key = await t.store.db.selectFrom('dkim_keys').select(['selector', 'state', 'private_key']).where('domain', '=', 'end2.example').executeTakeFirstOrThrow();
      expect(key).toMatchObject({ selector: 'default', state: 'signing' });
      const signature = crypto.sign('sha256', Buffer.from('mail'), key.private_key);
      expect(crypto.verify('sha256', Buffer.from('mail'), pub, signature)).toBe(true);
      // Every domain gets its own key.
      const other = (await list('?filter[domain]=end1.example')).json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(other.attributes.data).not.toBe(txtData);
    });

    it('a domain without presence gets no records and no key', async () => {
      await t.admin.domains.createDomain({ name: 'registered-only.example', customerId: Number(x.end1.customerId), registered: true });
      expect(await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'registered-only.example').execute()).toEqual([]);
      expect(await t.store.db.selectFrom('dkim_keys').select('id').where('domain', '=', 'registered-only.example').execute()).toEqual([]);
    });

    it("a plan's DNS template replaces the operator default", async () => {
      const { planId } = await t.admin.packages.createPlan({
        name: 'templated',
        dnsTemplate: [
          { name: '@', record_type: 'A', data: '198.51.100.7', ttl: 600 },
          { name: 'shop', record_type: 'CNAME', data: 'shops.example.net.' },
        ],
      });
      const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.solo.customerId), planId, name: 'templated', linuxUser: 'u_templated' });
      await t.admin.domains.createDomain({ name: 'templated.example', customerId: Number(x.solo.customerId), packageId });
      const ids = await idsOf('templated.example');
      const r = await list('?filter[domain]=templated.example&filter[record_type]=A,CNAME', x.solo.token);
      expect(r.json.data).toEqual([
        record(ids['A '], { record_type: 'A', domain: 'templated.example', data: '198.51.100.7', ttl: 600, tag: 'base' }),
        record(ids['CNAME shop'], { record_type: 'CNAME', name: 'shop', domain: 'templated.example', data: 'shops.example.net', tag: 'base' }),
      ]);
      expect(Object.keys(ids).sort()).toEqual(['A ', 'CNAME shop', 'TXT default._domainkey']);
    });

    it('a template is checked by the API rules when the plan is created', async () => {
      await expect(t.admin.packages.createPlan({ name: 'bad', dnsTemplate: [{ name: 'www', record_type: 'CNAME', data: 'x' }] })).rejects.toThrow(
        'DNS template: record 1: CNAME data must be a fully qualified domain name (it is always absolute).',
      );
      await expect(
        t.admin.packages.createPlan({
          name: 'bad',
          dnsTemplate: [
            { name: 'www', record_type: 'A', data: '192.0.2.1' },
            { name: 'www', record_type: 'CNAME', data: 'web.example.net' },
          ],
        }),
      ).rejects.toThrow('DNS template: record 2: Other records exist at this name; a CNAME must be the only record at its name.');
      await expect(t.admin.packages.createPlan({ name: 'bad', dnsTemplate: [{ record_type: 'TXT', name: 'default._domainkey', data: 'v=DKIM1; p=' }] })).rejects.toThrow(
        'DNS template: record 1: default._domainkey is reserved for the managed DKIM key.',
      );
      await expect(t.admin.packages.createPlan({ name: 'bad', dnsTemplate: [{ type: 'A', data: '192.0.2.1' }] })).rejects.toThrow(
        'DNS template: record 1 must be {"name":…,"record_type":…,"data":…,"ttl":…} (name and ttl optional).',
      );
    });
  });

  describe('admin package set-plan (API guide "DNS records")', () => {
    let planB: number;
    beforeAll(async () => {
      ({ planId: planB } = await t.admin.packages.createPlan({
        name: 'plan B',
        dnsTemplate: [
          { name: '', record_type: 'A', data: '203.0.113.1' },
          { name: 'www', record_type: 'CNAME', data: 'web.example.net' },
          { name: 'app', record_type: 'A', data: '203.0.113.2' },
        ],
      }));
    });

    it('resets base records of each domain of the package; keeps custom and managed; respects dns_update_lock', async () => {
      const { customerId } = await t.admin.customers.createCustomer({ contact: { name: 'P', email: 'p@plan.example' } });
      const { token } = await t.admin.customers.issueToken((await t.admin.customers.listContacts(customerId))[0].id);
      const { planId } = await t.admin.packages.createPlan({ name: 'plan A' });
      const { packageId } = await t.admin.packages.createPackage({ customerId, planId, name: 'p', linuxUser: 'u_plan' });
      await t.admin.domains.createDomain({ name: 'reset.example', customerId, packageId });
      await t.admin.domains.createDomain({ name: 'locked.example', customerId, packageId });
      const lock = await call(t.app, 'PATCH', '/domains/locked.example', {
        token,
        body: { data: { type: 'domain', id: 'locked.example', attributes: { presence: { dns_update_lock: true } } } },
      });
      expect(lock.status).toBe(200);
      // A custom A at app clashes with the new template's app A? No: different data is fine. A custom TXT at www blocks the template's www CNAME.
      const custom = recordIdOf(await post({ record_type: 'TXT', name: 'www', domain: 'reset.example', data: 'keep me' }, token));
      const lockedBefore = await t.store.db.selectFrom('dns_records').selectAll().where('domain', '=', 'locked.example').orderBy('id').execute();
      const serial = async (d: string) => (await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', d).executeTakeFirstOrThrow()).dns_serial;
      const serials = { reset: await serial('reset.example'), locked: await serial('locked.example') };

      const result = await t.admin.packages.setPackagePlan(packageId, planB);
      expect(result).toEqual({
        packageId,
        planId: planB,
        domains: [
          { domain: 'locked.example', base_records: 'locked', removed: 0, inserted: 0, skipped: 0 },
          { domain: 'reset.example', base_records: 'reset', removed: 6, inserted: 2, skipped: 1 },
        ],
      });
      expect((await t.admin.packages.package(packageId)).plan_id).toBe(planB);
      const ids = await idsOf('reset.example');
      const l = await list('?filter[domain]=reset.example', token);
      const dkim = l.json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(l.json.data).toEqual([
        record(ids['A '], { record_type: 'A', domain: 'reset.example', data: '203.0.113.1', tag: 'base' }),
        record(ids['A app'], { record_type: 'A', name: 'app', domain: 'reset.example', data: '203.0.113.2', tag: 'base' }),
        record(ids['TXT default._domainkey'], { record_type: 'TXT', name: 'default._domainkey', domain: 'reset.example', data: dkim.attributes.data, tag: 'managed' }),
        record(custom, { record_type: 'TXT', name: 'www', domain: 'reset.example', data: 'keep me' }),
      ]);
      expect(await t.store.db.selectFrom('dns_records').selectAll().where('domain', '=', 'locked.example').orderBy('id').execute()).toEqual(lockedBefore);
      // One DNS change for the reset domain, none for the locked one.
      expect(await serial('reset.example')).toBe(serials.reset + 1);
      expect(await serial('locked.example')).toBe(serials.locked);
    });

    it('a plan change leaves out template records that a customer\'s delegation cut would hide', async () => {
      const { customerId } = await t.admin.customers.createCustomer({ contact: { name: 'Q', email: 'q@plan.example' } });
      const { token } = await t.admin.customers.issueToken((await t.admin.customers.listContacts(customerId))[0].id);
      const { planId } = await t.admin.packages.createPlan({ name: 'plan Q' });
      const { packageId } = await t.admin.packages.createPackage({ customerId, planId, name: 'q', linuxUser: 'u_cut' });
      await t.admin.domains.createDomain({ name: 'cut.example', customerId, packageId });
      // The customer delegates app.cut.example; plan B's template has an A record at app.
      const ns = recordIdOf(await post({ record_type: 'NS', name: 'app', domain: 'cut.example', data: 'ns1.elsewhere.example' }, token));
      const result = await t.admin.packages.setPackagePlan(packageId, planB);
      expect(result.domains).toEqual([{ domain: 'cut.example', base_records: 'reset', removed: 6, inserted: 2, skipped: 1 }]);
      const l = await list('?filter[domain]=cut.example', token);
      expect(l.json.data.filter((d: any) => d.attributes.name === 'app').map((d: any) => [d.id, d.attributes.record_type])).toEqual([[ns, 'NS']]);
    });

    it('`hostplane admin package set-plan` prints what it did (--json)', async () => {
      // A store of its own that the CLI process opens by DATABASE_URL.
      const ts: TestStore = await freshStore(engine as EngineName);
      const app = await createTestApp(engine, {}, { store: ts });
      try {
        const y = await seedTenants(app.admin);
        const { planId } = await app.admin.packages.createPlan({ name: 'cli plan', dnsTemplate: [{ name: '', record_type: 'A', data: '203.0.113.9' }] });
        let databaseUrl = ts.url;
        if (ts.schema) {
          const u = new URL(ts.url);
          u.searchParams.set('schema', ts.schema);
          databaseUrl = u.toString();
        }
        const env: NodeJS.ProcessEnv = { ...process.env };
        for (const key of Object.keys(EnvSchema.properties)) delete env[key];
        const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', 'package', 'set-plan', '--package', y.solo.packageId, '--plan', String(planId), '--json'], {
            cwd: ROOT,
            env: { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d) => (stdout += d));
          child.stderr.on('data', (d) => (stderr += d));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        });
        expect(out.stderr).toBe('');
        expect(out.code).toBe(0);
        expect(out.stdout).toBe(
          `${JSON.stringify({ package_id: y.solo.packageId, plan_id: String(planId), domains: [{ domain: 'solo.example', base_records: 'reset', removed: 6, inserted: 1, skipped: 0 }] })}\n`,
        );
        const l = await call(app.app, 'GET', '/dns-records?filter[domain]=solo.example', { token: y.solo.token });
        expect(l.json.data.map((d: any) => `${d.attributes.record_type} ${d.attributes.name} ${d.attributes.data.slice(0, 8)} ${d.attributes.tags[0]}`)).toEqual([
          'A  203.0.11 base',
          'TXT default._domainkey v=DKIM1; managed',
        ]);
      } finally {
        await app.close();
        await ts.drop();
      }
    });
  });
});
