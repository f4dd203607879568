// The mail records among a presence domain's base records (API guide "DNS records";
// docs/decisions/0022-mail-records-and-discovery.md): SPF naming the MX and the registered mail
// servers, DMARC with the plan's policy, the RFC 6186 SRV records of the MX host and `autoconfig`;
// added to a plan's own template too; reset with the others on a plan change; the DNS server
// answers them; `hostplane admin plan show|set-dmarc-policy` and what they refuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, processUrl, type TestApp, type TestStore } from '../../helpers/app.js';
import { record } from '../../helpers/dns-records.js';
import { ask, rr } from '../../helpers/dns.js';
import { runCli } from '../../helpers/cli.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { pollUntil } from '../../helpers/wait.js';
import { nowIso } from '../../../src/db/time.js';
import { MailServersRepository } from '../../../src/provisioning/mail/servers.repository.js';
import { spfHosts, spfRecord } from '../../../src/resources/dns-records/dns-records.mail-records.js';

const byId = <T extends { id: string }>(data: T[]) => [...data].sort((a, b) => Number(a.id) - Number(b.id));

describe.each(ENGINES)('mail records on %s', { timeout: 60_000 }, (engine) => {
  let ts: TestStore;
  let t: TestApp;
  let x: Tenants;
  let env: Record<string, string>;
  const cli = (args: string[]) => runCli(args, env);
  const records = async (domain: string, token: string) => byId((await call(t.app, 'GET', `/dns-records?filter[domain]=${domain}`, { token })).json.data);
  /** `type name → data` of a zone's base records, as a client lists them. */
  const base = async (domain: string, token: string) =>
    (await records(domain, token)).filter((d: any) => d.attributes.tags[0] === 'base').map((d: any) => `${d.attributes.record_type} ${d.attributes.name} ${d.attributes.data}`);
  /** A new customer with a package on `planId` and the presence domain `domain`; its token. */
  const customerOn = async (planId: number, domain: string) => {
    const { customerId, contactId } = await t.admin.customers.createCustomer({ contact: { name: domain, email: `admin@${domain}` } });
    const { packageId } = await t.admin.packages.createPackage({ customerId, planId, name: domain, linuxUser: `u_${domain.split('.')[0].replace(/-/g, '_')}` });
    await t.admin.domains.createDomain({ name: domain, customerId, packageId });
    return { token: (await t.admin.customers.issueToken(contactId)).token, packageId };
  };

  beforeAll(async () => {
    ts = await freshStore(engine);
    t = await createTestApp(engine, { DNS_BASE_MX: 'mx1.example.net', DNS_POLL_MS: '50' }, { store: ts, dns: true });
    env = { DATABASE_URL: processUrl(ts), PUBLIC_BASE_URL: BASE, DNS_BASE_MX: 'mx1.example.net' };
    // Two mail servers with host names, one at an address (as the local stack registers it).
    const servers = new MailServersRepository(t.store.db);
    for (const [name, smtp] of [['mx2', 'MX2.example.net:25'], ['mx1', 'mx1.example.net:25'], ['local', '127.0.0.1:2525']]) {
      await servers.add({ name, doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'not-used', smtp, imap: smtp.replace(/:\d+$/, ':993'), is_default: name === 'mx1' ? 1 : 0, created_at: nowIso() });
    }
    x = await seedTenants(t.admin);
  });
  afterAll(async () => {
    await t?.close();
    await ts?.drop();
  });

  it('the default template: SPF names the MX and every mail server with a host name, DMARC quarantine, SRV at the MX host, autoconfig at the API', async () => {
    const d = 'end1.example';
    const all = await records(d, x.end1.token);
    const id = (type: string, name: string) => all.find((r: any) => r.attributes.record_type === type && r.attributes.name === name)!.id;
    expect(all.filter((r: any) => !['A', 'AAAA', 'MX'].includes(r.attributes.record_type) && r.attributes.tags[0] === 'base')).toEqual([
      record(id('TXT', ''), { record_type: 'TXT', domain: d, data: 'v=spf1 mx a:mx1.example.net a:mx2.example.net -all', tag: 'base' }),
      record(id('TXT', '_dmarc'), { record_type: 'TXT', name: '_dmarc', domain: d, data: 'v=DMARC1; p=quarantine', tag: 'base' }),
      record(id('SRV', '_submission._tcp'), { record_type: 'SRV', name: '_submission._tcp', domain: d, data: '0 1 587 mx1.example.net', tag: 'base' }),
      record(id('SRV', '_imaps._tcp'), { record_type: 'SRV', name: '_imaps._tcp', domain: d, data: '0 1 993 mx1.example.net', tag: 'base' }),
      record(id('SRV', '_imap._tcp'), { record_type: 'SRV', name: '_imap._tcp', domain: d, data: '10 1 143 mx1.example.net', tag: 'base' }),
      record(id('CNAME', 'autoconfig'), { record_type: 'CNAME', name: 'autoconfig', domain: d, data: 'api.test', tag: 'base' }),
    ]);
  });

  it('the DNS server answers them', async () => {
    const port = t.dns!.port!;
    const answer = async (name: string, type: string) =>
      (await pollUntil(() => ask(port, 'udp', name, type), (r) => r.p.answers.length > 0, `${name} ${type}`)).p.answers.map(rr);
    expect(await answer('end2.example', 'TXT')).toEqual([{ name: 'end2.example', type: 'TXT', ttl: 3600, data: ['v=spf1 mx a:mx1.example.net a:mx2.example.net -all'] }]);
    expect(await answer('_dmarc.end2.example', 'TXT')).toEqual([{ name: '_dmarc.end2.example', type: 'TXT', ttl: 3600, data: ['v=DMARC1; p=quarantine'] }]);
    expect(await answer('_submission._tcp.end2.example', 'SRV')).toEqual([
      { name: '_submission._tcp.end2.example', type: 'SRV', ttl: 3600, data: { priority: 0, weight: 1, port: 587, target: 'mx1.example.net' } },
    ]);
    expect(await answer('_imaps._tcp.end2.example', 'SRV')).toEqual([
      { name: '_imaps._tcp.end2.example', type: 'SRV', ttl: 3600, data: { priority: 0, weight: 1, port: 993, target: 'mx1.example.net' } },
    ]);
    expect(await answer('_imap._tcp.end2.example', 'SRV')).toEqual([
      { name: '_imap._tcp.end2.example', type: 'SRV', ttl: 3600, data: { priority: 10, weight: 1, port: 143, target: 'mx1.example.net' } },
    ]);
    expect(await answer('autoconfig.end2.example', 'CNAME')).toEqual([{ name: 'autoconfig.end2.example', type: 'CNAME', ttl: 3600, data: 'api.test' }]);
  });

  it("a plan's own template keeps its own SPF and SRV; its DMARC record keeps its tags and gets the plan's policy; the rest is added for its MX", async () => {
    const { planId } = await t.admin.packages.createPlan({
      name: 'own mail',
      dmarcPolicy: 'reject',
      dnsTemplate: [
        { name: '', record_type: 'MX', data: '20 backup.mail.example' },
        { name: '', record_type: 'MX', data: '10 in.mail.example' },
        { name: '', record_type: 'TXT', data: 'v=spf1 include:_spf.mail.example ~all' },
        { name: '_dmarc', record_type: 'TXT', data: 'v=DMARC1; p=none; rua=mailto:dmarc@mail.example' },
        { name: '_imaps._tcp', record_type: 'SRV', data: '0 1 993 imap.mail.example' },
      ],
    });
    const { token } = await customerOn(planId, 'own-mail.example');
    expect(await base('own-mail.example', token)).toEqual([
      'MX  20 backup.mail.example',
      'MX  10 in.mail.example',
      'TXT  v=spf1 include:_spf.mail.example ~all',
      'TXT _dmarc v=DMARC1; p=reject; rua=mailto:dmarc@mail.example',
      'SRV _imaps._tcp 0 1 993 imap.mail.example',
      'SRV _submission._tcp 0 1 587 in.mail.example',
      'SRV _imap._tcp 10 1 143 in.mail.example',
      'CNAME autoconfig api.test',
    ]);
    // A new policy keeps the template's other tags.
    await t.admin.packages.setDmarcPolicy(planId, 'none');
    expect((await base('own-mail.example', token)).filter((b) => b.startsWith('TXT _dmarc'))).toEqual(['TXT _dmarc v=DMARC1; p=none; rua=mailto:dmarc@mail.example']);
  });

  it('SPF names at most nine mail servers, so that it stays within 10 DNS lookups', () => {
    const many = Array.from({ length: 12 }, (_, i) => `mx${String(i).padStart(2, '0')}.example.net:25`);
    expect(spfHosts([...many, 'mx00.example.net:2525', '[2001:db8::25]:25', 'localhost:25'])).toEqual(many.slice(0, 9).map((h) => h.replace(':25', '')));
    expect(spfRecord([])).toBe('v=spf1 mx -all');
  });

  it('a plan change resets them with the other base records: the new plan\'s policy; a locked domain keeps its own', async () => {
    const { planId: strict } = await t.admin.packages.createPlan({ name: 'strict', dmarcPolicy: 'reject' });
    const { planId: lax } = await t.admin.packages.createPlan({ name: 'lax', dmarcPolicy: 'none' });
    const { token, packageId } = await customerOn(lax, 'moving.example');
    const dmarcOf = async (d: string) => (await base(d, token)).filter((r) => r.startsWith('TXT _dmarc'));
    expect(await dmarcOf('moving.example')).toEqual(['TXT _dmarc v=DMARC1; p=none']);
    // The customer deletes the DMARC record; the plan change brings it back with the new policy.
    const dmarcId = (await records('moving.example', token)).find((r: any) => r.attributes.name === '_dmarc')!.id;
    expect((await call(t.app, 'DELETE', `/dns-records/${dmarcId}`, { token })).status).toBe(202);
    const r = await t.admin.packages.setPackagePlan(packageId, strict);
    expect(r.domains).toEqual([{ domain: 'moving.example', base_records: 'reset', removed: 11, inserted: 11, skipped: 0 }]);
    expect(await dmarcOf('moving.example')).toEqual(['TXT _dmarc v=DMARC1; p=reject']);
    expect((await base('moving.example', token)).filter((b) => b.startsWith('SRV') || b.startsWith('CNAME'))).toEqual([
      'SRV _submission._tcp 0 1 587 mx1.example.net',
      'SRV _imaps._tcp 0 1 993 mx1.example.net',
      'SRV _imap._tcp 10 1 143 mx1.example.net',
      'CNAME autoconfig api.test',
    ]);
  });

  describe('hostplane admin plan show | set-dmarc-policy', () => {
    let planId: string;
    let open: { token: string; packageId: number };
    let locked: string;
    const failed = (stderr: string) => ({ code: 1, stdout: '', stderr });
    const json = async (args: string[]) => {
      const r = await cli([...args, '--json']);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      return JSON.parse(r.stdout);
    };
    const dmarc = async (d: string) => (await base(d, open.token)).filter((b) => b.startsWith('TXT _dmarc'));

    beforeAll(async () => {
      planId = (await json(['admin', 'plan', 'create', '--name', 'Mail plan'])).id;
      open = await customerOn(Number(planId), 'open.example');
      // A second package of the same customer on the plan, its domain locked.
      const owner = (await t.admin.packages.package(open.packageId)).customer_id;
      const { packageId } = await t.admin.packages.createPackage({ customerId: owner, planId: Number(planId), name: 'locked', linuxUser: 'u_locked_dmarc' });
      await t.admin.domains.createDomain({ name: 'locked-dmarc.example', customerId: owner, packageId });
      const patch = await call(t.app, 'PATCH', '/domains/locked-dmarc.example', {
        token: open.token,
        body: { data: { type: 'domain', id: 'locked-dmarc.example', attributes: { presence: { dns_update_lock: true } } } },
      });
      expect(patch.status).toBe(200);
      locked = 'locked-dmarc.example';
    });

    it('create defaults to quarantine; show prints the plan with its policy', async () => {
      expect(await json(['admin', 'plan', 'show', planId])).toEqual({
        id: planId, name: 'Mail plan', max_databases: 5, max_email_addresses: 50, mailbox_quota_mb: 2048, max_subdomains: 20,
        database_versions: ['mariadb-10.11'], php_versions: ['8.3', '8.4', '8.5'], webspace_mb: 10240, dmarc_policy: 'quarantine',
        recipients_per_hour: 500, ssh_keys_per_package: 10, reseller_id: null, created_at: expect.any(String),
      });
      const text = await cli(['admin', 'plan', 'show', planId]);
      expect(text).toEqual({ code: 0, stderr: '', stdout: expect.stringMatching(/\n {2}dmarc_policy +quarantine\n/) });
      expect(text.stdout).toMatch(new RegExp(`^Plan ${planId} \\(Mail plan\\)\n`));
    });

    it('set-dmarc-policy changes the plan and the _dmarc record of its domains, except a locked one', async () => {
      const before = await base(locked, open.token);
      expect(await cli(['admin', 'plan', 'set-dmarc-policy', planId, 'reject'])).toEqual({
        code: 0,
        stderr: '',
        stdout: `Plan ${planId} now publishes DMARC policy reject.\n  ${locked}: _dmarc kept (dns_update_lock is on)\n  open.example: _dmarc updated\n`,
      });
      expect(await dmarc('open.example')).toEqual(['TXT _dmarc v=DMARC1; p=reject']);
      expect(await base(locked, open.token)).toEqual(before);
      expect(await json(['admin', 'plan', 'set-dmarc-policy', planId, 'none'])).toEqual({
        plan_id: planId,
        dmarc_policy: 'none',
        domains: [{ domain: locked, dmarc_record: 'locked' }, { domain: 'open.example', dmarc_record: 'updated' }],
      });
      expect((await json(['admin', 'plan', 'show', planId])).dmarc_policy).toBe('none');
      // A new domain of the plan publishes it from the start.
      const { token } = await customerOn(Number(planId), 'new-on-plan.example');
      expect((await base('new-on-plan.example', token)).filter((b) => b.startsWith('TXT _dmarc'))).toEqual(['TXT _dmarc v=DMARC1; p=none']);
    });

    it('the DNS server answers the new policy', async () => {
      await cli(['admin', 'plan', 'set-dmarc-policy', planId, 'quarantine']);
      const got = await pollUntil(() => ask(t.dns!.port!, 'udp', '_dmarc.open.example', 'TXT'), (r) => r.p.answers.length === 1 && String(r.p.answers[0].data).includes('quarantine'), 'the new policy');
      expect(got.p.answers.map(rr)).toEqual([{ name: '_dmarc.open.example', type: 'TXT', ttl: 3600, data: ['v=DMARC1; p=quarantine'] }]);
    });

    it('a bad policy or plan is refused with a clear message and changes nothing', async () => {
      const plans = await json(['admin', 'plan', 'list']);
      const records = await base('open.example', open.token);
      const message = 'Unknown DMARC policy "strict"; choose from none, quarantine, reject.';
      expect(await cli(['admin', 'plan', 'set-dmarc-policy', planId, 'strict'])).toEqual(failed(`hostplane: ${message}\n`));
      expect(await cli(['admin', 'plan', 'set-dmarc-policy', planId, 'Reject', '--json'])).toEqual(
        failed(`${JSON.stringify({ error: { code: 'invalid_api_data', message: 'Unknown DMARC policy "Reject"; choose from none, quarantine, reject.' } })}\n`),
      );
      expect(await cli(['admin', 'plan', 'create', '--name', 'X', '--dmarc-policy', 'strict'])).toEqual(failed(`hostplane: ${message}\n`));
      expect(await cli(['admin', 'plan', 'set-dmarc-policy', '99999', 'reject'])).toEqual(failed('hostplane: No plan 99999.\n'));
      expect(await cli(['admin', 'plan', 'show', '99999'])).toEqual(failed('hostplane: No plan 99999.\n'));
      expect(await json(['admin', 'plan', 'list'])).toEqual(plans);
      expect(await base('open.example', open.token)).toEqual(records);
    });
  });
});
