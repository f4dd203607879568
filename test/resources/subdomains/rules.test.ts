// The rules of /subdomains as a client meets them (API guide "Subdomains";
// docs/decisions/0008-web-servers.md), on both engines, without a web server process (no worker
// runs: the answers and what is stored are what counts here; test/resources/subdomains/web.test.ts
// makes them real): bad values → 422 pointing at the member and naming what is possible, nothing
// stored; 409 for a taken name, a CNAME or a delegation at the name, max_subdomains; every kind
// change (API guide "Subdomains") and the uninitialized redirect of the customer menu; filters; the
// on-demand TLS question.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, processUrl, type TestApp, type TestStore } from '../../helpers/app.js';
import { runCli } from '../../helpers/cli.js';
import { conflictOn, errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { patchSubdomain, postSubdomain } from '../../helpers/subdomains.js';
import { WebServersRepository } from '../../../src/provisioning/web/servers.repository.js';
import { nowIso } from '../../../src/db/time.js';

const HOME_ROOT = '/srv/www';

describe.each(ENGINES)('subdomain rules on %s', (engine) => {
  let ts: TestStore;
  let t: TestApp;
  let x: Tenants;
  /** A customer on web1 (HTTPS, PHP 8.2), plan offering 8.2 and 8.3, at most 3 subdomains. */
  let c: { token: string; domain: string; packageId: string };
  /** A customer on web-plain (no HTTPS, no PHP). */
  let plain: { token: string; domain: string };

  beforeAll(async () => {
    ts = await freshStore(engine);
    t = await createTestApp(engine, {}, { store: ts });
    x = await seedTenants(t.admin);
    const servers = new WebServersRepository(t.store.db);
    const web = (name: string, https: boolean, php: Record<string, string>, isDefault: 0 | 1) =>
      servers.add({
        name, caddy_admin: 'http://127.0.0.1:9', http_listen: '127.0.0.1:80', https_listen: https ? '127.0.0.1:443' : null, addresses: '["192.0.2.10","2001:db8::10"]',
        home_root: HOME_ROOT, state_dir: `${HOME_ROOT}/.hostplane`, php: JSON.stringify(php), is_default: isDefault, created_at: nowIso(),
      });
    await web('web1', true, { '8.2': '/usr/sbin/php-fpm8.2' }, 1);
    await web('web-plain', false, {}, 0);
    const customer = async (key: string, webServer?: string) => {
      const { customerId, contactId } = await t.admin.customers.createCustomer({ organization: key, contact: { name: key, email: `a@${key}.example`, phone: '+49 30 1234567' } });
      const { planId } = await t.admin.packages.createPlan({ name: key, maxSubdomains: 3, phpVersions: ['8.2', '8.3'] });
      const { packageId } = await t.admin.packages.createPackage({ customerId, planId, name: key, linuxUser: `u_${key}`, webServer });
      const { domain } = await t.admin.domains.createDomain({ name: `${key}.example`, customerId, packageId, registered: true });
      const { token } = await t.admin.customers.issueToken(contactId, 'test');
      return { token, domain, packageId: String(packageId) };
    };
    c = await customer('rules');
    plain = await customer('plain', 'web-plain');
  });
  afterAll(async () => {
    await t?.close();
    await ts?.drop();
  });

  const stored = async () => ({
    subdomains: (await t.store.db.selectFrom('subdomains').select('id').execute()).length,
    jobs: (await t.store.db.selectFrom('queue_jobs').select('id').where('job_type', '=', 'subdomain').execute()).length,
    records: (await t.store.db.selectFrom('dns_records').select('id').where('subdomain_id', 'is not', null).execute()).length,
  });
  const post = (attributes: Record<string, unknown>, token = c.token) => postSubdomain(t, token, attributes);
  const redirect = (target: string, more: Record<string, unknown> = {}) => ({ subdomain_type: 'redirect', domain: c.domain, subdomain: 'r', redirect: { target, ...more } });
  const webspace = (ws: Record<string, unknown>) => ({ subdomain_type: 'webspace', domain: c.domain, subdomain: 'w', webspace: ws });
  /** Deletes every subdomain row of the suite's customer between tests (no worker runs). */
  const clear = () => t.store.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('dns_records').where('subdomain_id', 'is not', null).execute();
    await trx.deleteFrom('queue_jobs').where('job_type', '=', 'subdomain').execute();
    await trx.deleteFrom('subdomains').execute();
  });

  it('bad values → 422 on the member with what is possible; nothing is stored', async () => {
    const before = await stored();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...redirect('https://t.example/'), subdomain_type: 'ftp' }, 'subdomain_type', 'subdomain_type must be one of webspace, redirect, email.'],
      [{ ...redirect('https://t.example/'), subdomain: 'a_b' }, 'subdomain', '"a_b" contains "_", which host names cannot have.'],
      [{ ...redirect('https://t.example/'), subdomain: '*' }, 'subdomain', 'A subdomain cannot be a wildcard (*).'],
      [{ ...redirect('https://t.example/'), subdomain: '' }, 'subdomain', 'subdomain must name a label, e.g. "shop"; the domain itself is not a subdomain.'],
      [{ ...redirect('https://t.example/'), subdomain: 'a..b' }, 'subdomain', 'subdomain has an empty label.'],
      [{ ...redirect('https://t.example/'), subdomain: `${'a'.repeat(64)}` }, 'subdomain', `"${'a'.repeat(64)}" is not a valid label: letters, digits and hyphens, at most 63 characters, no hyphen at either end.`],
      [webspace({ path: '../up/' }), 'webspace/path', 'webspace.path must stay inside your home: ".." is not allowed.'],
      [webspace({ path: '/a/../../b' }), 'webspace/path', 'webspace.path must stay inside your home: ".." is not allowed.'],
      [webspace({ path: 'a\\b' }), 'webspace/path', 'webspace.path uses "/" between directories, not "\\".'],
      [webspace({ path: 'a\u0001b' }), 'webspace/path', 'webspace.path must not contain control characters.'],
      [webspace({ path: `${HOME_ROOT}/u_rules/htdocs` }), 'webspace/path', 'webspace.path is relative to your home: give e.g. "/htdocs/", not the path on the server.'],
      [webspace({ path: '/', php_version: '7.4' }), 'webspace/php_version', 'PHP 7.4 is not available. This package can use PHP 8.2, or null for the default (8.2).'],
      [webspace({ path: '/', php_version: '8.3' }), 'webspace/php_version', 'PHP 8.3 is not available. This package can use PHP 8.2, or null for the default (8.2).'],
      [webspace({}), 'webspace/path', 'A webspace subdomain needs webspace.path, e.g. "/htdocs/".'],
      [redirect('ftp://t.example/'), 'redirect/target', 'redirect.target must start with http:// or https://.'],
      [redirect('t.example/'), 'redirect/target', 'redirect.target must be an absolute http or https URL, e.g. "https://www.example.com/".'],
      [redirect('https://u:p@t.example/'), 'redirect/target', 'redirect.target must not contain a user name or password.'],
      [redirect('https://t.example/a b'), 'redirect/target', 'redirect.target must not contain spaces or control characters.'],
      [redirect(`https://t.example/${'x'.repeat(2000)}`), 'redirect/target', 'redirect.target must be at most 2000 characters.'],
      [redirect('https://t.example/page', { dynamic: true }), 'redirect/dynamic', 'A dynamic redirect appends the request path to the target, so the target must end with "/".'],
      [{ subdomain_type: 'redirect', domain: c.domain, subdomain: 'r' }, 'redirect/target', 'A redirect subdomain needs redirect.target, an absolute http or https URL.'],
      [{ ...redirect('https://t.example/'), webspace: { path: '/' } }, 'webspace', 'webspace belongs to a subdomain of type webspace, not redirect.'],
      [{ subdomain_type: 'email', domain: c.domain, subdomain: 'm', redirect: { target: 'https://t.example/' } }, 'redirect', 'redirect belongs to a subdomain of type redirect, not email.'],
      [{ ...redirect('https://t.example/'), domain: `www.${c.domain}` }, 'domain', `domain takes the domain without subdomains: use domain "${c.domain}" and subdomain "r.www".`],
    ];
    for (const [body, member, detail] of cases) {
      const r = await post(body);
      expect(r.json, `${member}: ${detail}`).toEqual(invalidAttribute('/subdomains', member, detail));
    }
    // redirect_to_https needs a web server that serves HTTPS.
    const h = await post({ subdomain_type: 'redirect', domain: plain.domain, subdomain: 'r', redirect: { target: 'https://t.example/', redirect_to_https: true } }, plain.token);
    expect(h.json).toEqual(invalidAttribute('/subdomains', 'redirect/redirect_to_https', "This package's web server does not serve HTTPS, so redirect_to_https cannot be switched on."));
    // And no PHP there: null is all a webspace can have.
    const p = await post({ subdomain_type: 'webspace', domain: plain.domain, subdomain: 'w', webspace: { path: '/', php_version: '8.2' } }, plain.token);
    expect(p.json).toEqual(invalidAttribute('/subdomains', 'webspace/php_version', 'PHP 8.2 is not available. This package has no PHP version available on its web server; use null.'));
    // Shapes the schema refuses: unknown members, wrong types.
    for (const body of [{ ...redirect('https://t.example/'), extra: 1 }, redirect('https://t.example/', { dynamic: 'yes' }), webspace({ path: '/', root: '/etc' })]) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.errors[0].id).toBe('invalid_api_data');
    }
    expect(await stored()).toEqual(before);
  });

  it('a domain of another customer or no domain at all → 404, like one that does not exist', async () => {
    for (const domain of [x.solo.domain, 'nobody.example']) {
      const r = await post({ ...redirect('https://t.example/'), domain });
      expect(r.json).toEqual(notFoundAt(`${BASE}/subdomains`, 'domain'));
    }
  });

  it('409: the same name twice, a CNAME at the name, a delegation above it; max_subdomains, also under parallel POSTs', async () => {
    await clear();
    const first = await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'Mail' });
    expect(first.status).toBe(202);
    expect(first.json.data.attributes.subdomain).toBe('mail');
    const again = await post({ subdomain_type: 'redirect', domain: c.domain, subdomain: 'MAIL', redirect: { target: 'https://t.example/' } });
    expect(again.json).toEqual(conflictOn('/subdomains', 'subdomain', `mail.${c.domain} exists already.`));
    const record = (name: string, record_type: string, data: string) =>
      call(t.app, 'POST', '/dns-records', { token: c.token, body: { data: { type: 'dns-record', attributes: { domain: c.domain, name, record_type, data } } } });
    expect((await record('cn', 'CNAME', 'elsewhere.example.')).status).toBe(202);
    expect((await record('deleg', 'NS', 'ns1.other.example.')).status).toBe(202);
    for (const [name, why] of [['cn', 'CNAME'], ['x.deleg', 'deleg']]) {
      const r = await post({ subdomain_type: 'email', domain: c.domain, subdomain: name });
      expect(r.status, name).toBe(409);
      expect(r.json.errors[0]).toMatchObject({ id: 'conflict', source: { pointer: '/data/attributes/subdomain' }, detail: expect.stringContaining(why) });
    }
    // Limit 3: one exists; of five parallel POSTs two pass.
    const tries = await Promise.all(['p1', 'p2', 'p3', 'p4', 'p5'].map((subdomain) => post({ subdomain_type: 'email', domain: c.domain, subdomain })));
    expect(tries.map((r) => r.status).sort()).toEqual([202, 202, 409, 409, 409]);
    for (const r of tries.filter((r) => r.status === 409)) {
      expect(r.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached', 'This package has reached its limit of 3 subdomains (max_subdomains of its plan).', `${BASE}/subdomains`));
    }
  });

  it('every kind change and the settings of each kind (API guide "Subdomains"); the answer is 202 with the subdomain as it will be', async () => {
    await clear();
    const created = await post(redirect('https://t.example/page'));
    const id = created.json.data.id;
    const step = async (attributes: Record<string, unknown>) => {
      const r = await patchSubdomain(t, c.token, id, attributes);
      expect(r.status, r.body).toBe(202);
      expect(r.json.data.links['queue-job']).toMatch(/\/queue-jobs\/[0-9]+$/);
      const g = await call(t.app, 'GET', `/subdomains/${id}`, { token: c.token });
      expect(g.json.data.attributes).toEqual(r.json.data.attributes);
      return r.json.data.attributes;
    };
    const refused = async (attributes: Record<string, unknown>) => (await patchSubdomain(t, c.token, id, attributes)).json;

    // redirect: dynamic needs a target ending in "/".
    expect(await refused({ redirect: { dynamic: true } })).toEqual(
      invalidAttribute(`/subdomains/${id}`, 'redirect/dynamic', 'A dynamic redirect appends the request path to the target, so the target must end with "/".'),
    );
    expect(await step({ redirect: { target: 'https://t.example/base/', dynamic: true } })).toMatchObject({ subdomain_type: 'redirect', redirect: { target: 'https://t.example/base/', dynamic: true, redirect_to_https: false } });
    expect(await step({ redirect: { dynamic: false, redirect_to_https: true } })).toMatchObject({ redirect: { dynamic: false, redirect_to_https: true } });
    // Settings of the other kind: 409.
    expect((await refused({ webspace: { php_version: '8.2' } })).errors[0]).toMatchObject({ id: 'invalid_state', source: { pointer: '/data/attributes/webspace' } });
    // redirect → webspace (webspace.path); the redirect's settings are gone.
    expect(await step({ webspace: { path: 'htdocs', php_version: '8.2' } })).toMatchObject({ subdomain_type: 'webspace', webspace: { path: '/htdocs/', php_version: '8.2', redirect_to_https: false }, redirect: null });
    expect((await refused({ redirect: { dynamic: true } })).errors[0]).toMatchObject({ id: 'invalid_state', source: { pointer: '/data/attributes/redirect' } });
    expect(await step({ webspace: { php_version: null, redirect_to_https: true }, description: 'shop' })).toMatchObject({ description: 'shop', webspace: { path: '/htdocs/', php_version: null, redirect_to_https: true } });
    // webspace → redirect (static).
    expect(await step({ redirect: { target: 'https://u.example/' } })).toMatchObject({ subdomain_type: 'redirect', webspace: null, redirect: { target: 'https://u.example/', dynamic: false, redirect_to_https: false } });
    // Not both at once; not the fixed attributes.
    expect(await refused({ webspace: { path: '/' }, redirect: { target: 'https://t.example/' } })).toEqual(
      invalidAttribute(`/subdomains/${id}`, 'redirect/target', 'One change sets either webspace.path (a webspace) or redirect.target (a redirect), not both.'),
    );
    expect(await refused({ subdomain_type: 'email' })).toEqual(
      invalidAttribute(`/subdomains/${id}`, 'subdomain_type', 'subdomain_type cannot be set: webspace.path makes a subdomain a webspace, redirect.target a redirect.'),
    );
    expect(await refused({ domain: x.solo.domain })).toEqual(invalidAttribute(`/subdomains/${id}`, 'domain', 'domain cannot be changed; create a new subdomain instead.'));
    expect(await refused({ subdomain: 'other' })).toEqual(invalidAttribute(`/subdomains/${id}`, 'subdomain', 'subdomain cannot be changed; create a new subdomain instead.'));
    // email → webspace and email → redirect.
    const mail = (await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'm1' })).json.data.id;
    expect((await patchSubdomain(t, c.token, mail, { webspace: { path: '/m/' } })).json.data.attributes).toMatchObject({ subdomain_type: 'webspace', webspace: { path: '/m/' } });
    const mail2 = (await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'm2' })).json.data.id;
    expect((await patchSubdomain(t, c.token, mail2, { redirect: { target: 'https://t.example/' } })).json.data.attributes).toMatchObject({ subdomain_type: 'redirect', redirect: { dynamic: false } });
    // Records follow the kind: the webspace has A/AAAA/MX and the SPF of its mail; an email subdomain only MX and SPF.
    const records = (await t.store.db.selectFrom('dns_records').select(['name', 'record_type']).where('subdomain_id', '=', Number(mail)).orderBy('record_type').execute()).map((r) => r.record_type);
    expect(records).toEqual(['A', 'AAAA', 'MX', 'TXT']);
  });

  it("a plan change resets the domain's base records, not a subdomain's own", async () => {
    await clear();
    const sub = (await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'keep' })).json.data.id;
    const own = () => t.store.db.selectFrom('dns_records').select(['record_type', 'data']).where('subdomain_id', '=', Number(sub)).orderBy('record_type').execute();
    const before = await own();
    expect(before).toEqual([{ record_type: 'MX', data: '10 mail.hostplane.test' }, { record_type: 'TXT', data: 'v=spf1 mx -all' }]);
    const { planId } = await t.admin.packages.createPlan({ name: 'next', maxSubdomains: 3, phpVersions: ['8.2'] });
    const r = await t.admin.packages.setPackagePlan(Number(c.packageId), planId);
    expect(r.domains).toEqual([expect.objectContaining({ domain: c.domain, base_records: 'reset' })]);
    expect(await own()).toEqual(before);
  });

  it("a customer's own SPF at the name is kept: the subdomain gets no second one (RFC 7208 §3.2)", async () => {
    await clear();
    const spf = await call(t.app, 'POST', '/dns-records', {
      token: c.token,
      body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'news', domain: c.domain, data: 'v=spf1 include:_spf.mailer.example -all' } } },
    });
    expect(spf.status).toBe(202);
    const sub = (await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'news' })).json.data.id;
    const own = await t.store.db.selectFrom('dns_records').select(['record_type', 'data']).where('subdomain_id', '=', Number(sub)).execute();
    expect(own).toEqual([{ record_type: 'MX', data: '10 mail.hostplane.test' }]);
  });

  it("the customer menu's uninitialized redirect: redirect null; dynamic and redirect_to_https → 409 until redirect.target sets it up (static)", async () => {
    await clear();
    const cli = await runCli(['admin', 'subdomain', 'create', '--domain', c.domain, '--subdomain', 'later', '--type', 'redirect', '--json'], { DATABASE_URL: processUrl(ts) });
    expect(cli, cli.stderr).toMatchObject({ code: 0, stderr: '' });
    const made = JSON.parse(cli.stdout);
    expect(made).toEqual({ id: expect.stringMatching(/^[0-9]+$/), fqdn: `later.${c.domain}`, subdomain_type: 'redirect', initialized: false, queue_job: expect.stringMatching(/^[0-9]+$/) });
    const g = await call(t.app, 'GET', `/subdomains/${made.id}`, { token: c.token });
    expect(g.json.data.attributes).toMatchObject({ subdomain_type: 'redirect', webspace: null, redirect: null });
    // From the menu: not listed among the customer's pending jobs (API guide "Queue jobs").
    const jobs = await call(t.app, 'GET', '/queue-jobs', { token: c.token });
    expect(jobs.json.data.map((j: any) => j.id)).not.toContain(made.queue_job);
    for (const redirect of [{ dynamic: true }, { dynamic: false }, { redirect_to_https: true }]) {
      const r = await patchSubdomain(t, c.token, made.id, { redirect });
      expect(r.json, JSON.stringify(redirect)).toEqual(
        errorBody('invalid_state', 409, 'Not allowed in the current state', 'This redirect has no target yet: set redirect.target first (it can be sent in the same request).', `${BASE}/subdomains/${made.id}`, { pointer: '/data/attributes/redirect' }),
      );
    }
    const set = await patchSubdomain(t, c.token, made.id, { redirect: { target: 'https://t.example/' } });
    expect(set.json.data.attributes.redirect).toEqual({ target: 'https://t.example/', dynamic: false, redirect_to_https: false });
    // The API itself never makes an uninitialized one.
    const api = await post({ subdomain_type: 'redirect', domain: c.domain, subdomain: 'r', redirect: null });
    expect(api.status).toBe(422);
  });

  it('filters package_id and domain; values that match nothing give an empty list; the on-demand TLS question', async () => {
    await clear();
    const a = (await post(redirect('https://t.example/'))).json.data.id;
    const b = (await post({ subdomain_type: 'email', domain: c.domain, subdomain: 'm' })).json.data.id;
    const ids = async (q: string) => (await call(t.app, 'GET', `/subdomains${q}`, { token: c.token })).json.data.map((d: any) => d.id);
    expect(await ids('')).toEqual([a, b]);
    expect(await ids(`?filter[package_id]=${c.packageId}`)).toEqual([a, b]);
    expect(await ids(`?filter[domain]=${c.domain.toUpperCase()}`)).toEqual([a, b]);
    expect(await ids('?filter[domain]=nobody.example')).toEqual([]);
    expect(await ids('?filter[package_id]=abc')).toEqual([]);
    const ask = async (domain: string) => (await call(t.app, 'GET', `/internal/tls-allowed?domain=${encodeURIComponent(domain)}`)).status;
    expect(await ask(`r.${c.domain}`)).toBe(200);
    expect(await ask(`m.${c.domain}`)).toBe(404);
    expect(await ask(c.domain)).toBe(404);
    expect(await ask('anything.example')).toBe(404);
  });
});
