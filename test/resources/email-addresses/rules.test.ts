// /email-addresses through HTTP on both engines, without a mail server (API guide "E-mail
// addresses", "Password rules", "Queue jobs"): the answers' whole shapes, every rule of an address,
// the mail directory each write leaves (the rows Dovecot and Postfix read), tenancy, and no
// plaintext password anywhere. No worker runs here: jobs stay pending; what the mail servers do
// with the directory is test/resources/email-addresses/mail.test.ts.
import bcrypt from 'bcryptjs';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { conflictOn, errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { GOOD_PASSWORD, patchEmail, placeholderMailServer, postAppPassword, postEmail } from '../../helpers/email.js';
import { runCli } from '../../helpers/cli.js';
import { MailServersRepository, mailReportKey } from '../../../src/provisioning/mail/servers.repository.js';
import { processUrl, freshStore } from '../../helpers/app.js';

const GENERATED = /^[A-Za-z0-9][A-Za-z0-9._-]{18}[A-Za-z0-9]$/;
const ORDER = ['address', 'address_ace', 'address_type', 'description', 'antispam', 'forward_to', 'autoresponder', 'quota', 'created_at'];
const MB = 1024 * 1024;

describe.each(ENGINES)('/email-addresses on %s', { timeout: 60_000 }, (engine) => {
  let t: TestApp;
  let x: Tenants;
  let databaseUrl: string;
  let dropStore: () => Promise<void>;
  /** Every plaintext password this suite saw: none may be stored anywhere (checked last). */
  const secrets: string[] = [];
  const token = () => x.end1.token;
  const domain = () => x.end1.domain;
  let n = 0;
  const local = () => `box${++n}`;

  beforeAll(async () => {
    const ts = await freshStore(engine);
    databaseUrl = processUrl(ts);
    dropStore = () => ts.drop();
    t = await createTestApp(engine, {}, { store: ts });
    x = await seedTenants(t.admin);
    await placeholderMailServer(t.store);
  });
  afterAll(async () => {
    await t?.close();
    await dropStore?.();
  });

  const directory = async (address: string) => ({
    user: await t.store.db.selectFrom('mail_users').selectAll().where('address', '=', address).executeTakeFirst(),
    aliases: (await t.store.db.selectFrom('mail_aliases').select('destination').where('source', '=', address).orderBy('destination').execute()).map((r) => r.destination),
    domain: await t.store.db.selectFrom('mail_domains').selectAll().where('domain', '=', address.split('@')[1]).executeTakeFirst(),
  });
  const verifies = async (address: string, password: string) => {
    const hash = (await directory(address)).user!.password_hash;
    expect(hash).toMatch(/^\{BLF-CRYPT\}\$2[aby]\$10\$/);
    return bcrypt.compare(password, hash.slice('{BLF-CRYPT}'.length));
  };
  const mailbox = async (attributes: Record<string, unknown> = {}) => {
    const r = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'mailbox', ...attributes });
    expect(r.status, r.body).toBe(202);
    if (r.json.data.attributes.password) secrets.push(r.json.data.attributes.password);
    return r;
  };

  it('POST mailbox without password → 202 with the address, the generated password once and links.queue-job; the mail directory has it (API guide "E-mail addresses")', async () => {
    const address = `${local()}@${domain()}`;
    const r = await postEmail(t, token(), { address: address.toUpperCase().replace(domain().toUpperCase(), domain()), address_type: 'mailbox', description: 'orders' });
    expect(r.status, r.body).toBe(202);
    const id = r.json.data.id;
    const password = r.json.data.attributes.password;
    secrets.push(password);
    expect(password).toMatch(GENERATED);
    const jobUrl = r.json.data.links['queue-job'];
    expect(jobUrl).toMatch(new RegExp(`^${BASE}/queue-jobs/[0-9]+$`));
    expect(r.headers['content-location']).toBe(jobUrl);
    expect(r.json).toEqual({
      data: {
        type: 'email-address',
        id: expect.stringMatching(/^[0-9]+$/),
        attributes: {
          address, address_ace: address, address_type: 'mailbox', description: 'orders', antispam: 'reject', forward_to: [],
          autoresponder: { text: '', active: false, activates: null, expires: null },
          quota: { limit_bytes: 2048 * MB, used_bytes: null, updated_at: null },
          created_at: expect.any(String), password,
        },
        relationships: {
          package: { data: { type: 'package', id: x.end1.packageId } },
          domain: { data: { type: 'domain', id: domain() } },
          'application-passwords': { links: { related: `${BASE}/email-addresses/${id}/application-passwords` } },
        },
        links: { self: `${BASE}/email-addresses/${id}`, 'queue-job': jobUrl },
      },
      links: { self: `${BASE}/email-addresses` },
    });
    expect(Object.keys(r.json.data.attributes)).toEqual([...ORDER, 'password']);
    expect(r.body.startsWith('{"data":')).toBe(true);
    const job = await call(t.app, 'GET', jobUrl.slice(BASE.length), { token: token() });
    expect(job.json.data.attributes).toMatchObject({ job_type: 'email-address', status: 'pending', action: 'create' });
    expect(job.json.data.links.object).toBe(`${BASE}/email-addresses/${id}`);
    // The directory: the mailbox with its bcrypt hash and the plan's quota, its domain; no aliases.
    const dir = await directory(address);
    expect(dir.user).toMatchObject({ address, domain: domain(), quota_bytes: 2048 * MB, active: 1, server: 'mx-test' });
    expect(await verifies(address, password)).toBe(true);
    expect(dir.aliases).toEqual([]);
    expect(dir.domain).toEqual({ domain: domain(), server: 'mx-test' });
    // GET shows it without the password and without the job link.
    const g = await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() });
    const { password: _pw, ...rest } = r.json.data.attributes;
    expect(g.json).toEqual({ data: { ...r.json.data, attributes: rest, links: { self: `${BASE}/email-addresses/${id}` } }, links: { self: `${BASE}/email-addresses/${id}` } });
  });

  it('a chosen password is never echoed and is what the directory verifies (API guide "E-mail addresses", "Password rules")', async () => {
    const r = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'mailbox', password: GOOD_PASSWORD });
    expect(r.status, r.body).toBe(202);
    expect(r.json.data.attributes.password).toBeUndefined();
    expect(r.body).not.toContain(GOOD_PASSWORD);
    expect(await verifies(r.json.data.attributes.address_ace, GOOD_PASSWORD)).toBe(true);
  });

  it('a password breaking rules → 422 invalid_password, one error per rule; nothing stored (API guide "Password rules")', async () => {
    const address = `kasimir@${domain()}`;
    const r = await postEmail(t, token(), { address, address_type: 'mailbox', password: 'Kasimir-Passw0rd' });
    expect(r.status).toBe(422);
    const ids = r.json.errors.map((e: any) => e.id);
    expect(new Set(ids)).toEqual(new Set(['invalid_password']));
    expect(r.json.errors.length).toBeGreaterThanOrEqual(2);
    for (const e of r.json.errors) expect(e).toMatchObject({ status: '422', title: 'Invalid password', source: { pointer: '/data/attributes/password' } });
    expect(r.json.errors.map((e: any) => e.detail)).toEqual(expect.arrayContaining([
      expect.stringMatching(/user name/), expect.stringMatching(/password, passwort or kennwort/),
    ]));
    expect(r.body).not.toContain('Kasimir-Passw0rd');
    expect((await directory(address)).user).toBeUndefined();
    const l = await call(t.app, 'GET', `/email-addresses?filter[address]=${address}`, { token: token() });
    expect(l.json.meta.total).toBe(0);
  });

  it('the portal password of the contact with that address is refused (create and PATCH) (API guide "E-mail addresses", "Password rules")', async () => {
    const address = `portal${++n}@${domain()}`;
    const { contactId } = await t.admin.customers.createContact(Number(x.end1.customerId), { name: 'Portal User', email: address.toUpperCase() });
    const portal = 'Zq8#nW3!yC5?tL2&';
    const set = await runCli(['admin', 'contact', 'set-portal-password', String(contactId), '--password-stdin'], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, { stdin: `${portal}\n` });
    expect(set.code, set.stderr).toBe(0);
    const r = await postEmail(t, token(), { address, address_type: 'mailbox', password: portal });
    expect(r.json).toEqual(errorBody('invalid_password', 422, 'Invalid password',
      'This is the customer-portal password of the contact with this e-mail address; choose another one.', `${BASE}/email-addresses`, { pointer: '/data/attributes/password' }));
    const ok = await postEmail(t, token(), { address, address_type: 'mailbox', password: GOOD_PASSWORD });
    expect(ok.status).toBe(202);
    const p = await patchEmail(t, token(), ok.json.data.id, { password: portal });
    expect(p.status).toBe(422);
    expect(p.json.errors[0].id).toBe('invalid_password');
    // Another mailbox may use it: the rule is about that user name.
    expect((await mailbox({ password: portal })).status).toBe(202);
    secrets.push(portal);
  });

  it('a forward: targets required, + allowed; its alias rows; no autoresponder, quota or password (API guide "E-mail addresses")', async () => {
    const address = `${local()}@${domain()}`;
    const none = await postEmail(t, token(), { address, address_type: 'forward' });
    expect(none.json).toEqual(invalidAttribute('/email-addresses', 'forward_to', 'A forward needs forward_to: the addresses it forwards to.'));
    const empty = await postEmail(t, token(), { address, address_type: 'forward', forward_to: [] });
    expect(empty.json).toEqual(invalidAttribute('/email-addresses', 'forward_to', 'A forward needs at least one address in forward_to.'));
    const pw = await postEmail(t, token(), { address, address_type: 'forward', forward_to: ['a@b.example'], password: GOOD_PASSWORD });
    expect(pw.json).toEqual(invalidAttribute('/email-addresses', 'password', 'Only a mailbox has a password; a forward logs in nowhere.'));
    const junk = await postEmail(t, token(), { address, address_type: 'forward', forward_to: ['a@b.example'], antispam: 'junk-folder' });
    expect(junk.json).toEqual(invalidAttribute('/email-addresses', 'antispam', 'junk-folder is only possible for mailboxes: a forward has no folders.'));
    const r = await postEmail(t, token(), { address, address_type: 'forward', forward_to: ['Team+Orders@Other.example', 'b@bücher.example'], antispam: 'none' });
    expect(r.status, r.body).toBe(202);
    expect(r.json.data.attributes).toEqual({
      address, address_ace: address, address_type: 'forward', description: null, antispam: 'none',
      forward_to: ['Team+Orders@other.example', 'b@xn--bcher-kva.example'], autoresponder: null, quota: null, created_at: expect.any(String),
    });
    expect(r.json.data.relationships['application-passwords']).toBeUndefined();
    const dir = await directory(address);
    expect(dir.user).toBeUndefined();
    expect(dir.aliases).toEqual(['Team+Orders@other.example', 'b@xn--bcher-kva.example'].sort());
  });

  it('forward_to entries: addresses, no duplicates, not itself, at most 100 (API guide "E-mail addresses")', async () => {
    const address = `${local()}@${domain()}`;
    const cases: Array<[unknown, string, string]> = [
      [['not an address'], 'forward_to/0', 'forward_to[0] is not an e-mail address.'],
      [['a@b.example', 'A@B.example'], 'forward_to/1', 'forward_to lists A@B.example twice.'],
      [[address.toUpperCase()], 'forward_to/0', 'An address cannot forward to itself.'],
      // The recipient delimiter would deliver it to the address itself: a loop.
      [[address.replace('@', '+loop@')], 'forward_to/0', 'An address cannot forward to itself.'],
      // Mail leaves without SMTPUTF8: a target's local part is ASCII.
      [['jörg@other.example'], 'forward_to/0', 'forward_to[0] is not an e-mail address.'],
      ['a@b.example', 'forward_to', 'forward_to must be an array of e-mail addresses.'],
      [Array.from({ length: 101 }, (_, i) => `t${i}@b.example`), 'forward_to', 'forward_to may hold at most 100 addresses.'],
    ];
    for (const [forwardTo, field, detail] of cases) {
      const r = await postEmail(t, token(), { address, address_type: 'forward', forward_to: forwardTo });
      if (field === 'forward_to' && typeof forwardTo === 'string') {
        expect(r.status).toBe(422); // the schema's own answer
        continue;
      }
      expect(r.json, detail).toEqual(invalidAttribute('/email-addresses', field, detail));
    }
  });

  it('a mailbox with forward_to keeps a copy: alias rows to itself and to every target (API guide "E-mail addresses")', async () => {
    const r = await mailbox({ forward_to: ['copy+in@other.example'] });
    const a = r.json.data.attributes.address_ace;
    expect(r.json.data.attributes.forward_to).toEqual(['copy+in@other.example']);
    expect((await directory(a)).aliases).toEqual([a, 'copy+in@other.example'].sort());
  });

  it('address rules: invalid → 422; an existing one (any case, any customer) → 409; a foreign or unknown domain → 404 (API guide "E-mail addresses")', async () => {
    const bad = ['no-at-sign', 'a b@x.example', '.dot@x.example', `${'l'.repeat(65)}@${domain()}`, 'a@-x.example', 'a@[127.0.0.1]', `a*b@${domain()}`, `wh?@${domain()}`, `jürgen@${domain()}`,
      // Beyond what the mail server takes in a login or a mail home (0009 "Addresses"); + is the recipient delimiter.
      `p+q@${domain()}`, `o'brien@${domain()}`, `a/b@${domain()}`, `/x@${domain()}`, `a!b@${domain()}`, `a=b@${domain()}`, `a%b@${domain()}`];
    for (const address of bad) {
      const r = await postEmail(t, token(), { address, address_type: 'mailbox' });
      expect(r.json, address).toEqual(invalidAttribute('/email-addresses', 'address', 'address must be an e-mail address local@domain: a local part of at most 64 characters (letters a-z, digits, _ and - in dot-separated parts) and a domain.'));
    }
    const type = await postEmail(t, token(), { address: `x@${domain()}`, address_type: 'alias' });
    expect(type.json).toEqual(invalidAttribute('/email-addresses', 'address_type', 'address_type must be one of mailbox, forward.'));
    const spam = await postEmail(t, token(), { address: `x@${domain()}`, address_type: 'mailbox', antispam: 'maybe' });
    expect(spam.json).toEqual(invalidAttribute('/email-addresses', 'antispam', 'antispam must be one of reject, junk-folder, subject-rewrite, none.'));
    const first = await mailbox();
    const address = first.json.data.attributes.address;
    const again = await postEmail(t, token(), { address: address.toUpperCase().replace(domain().toUpperCase(), domain()), address_type: 'forward', forward_to: ['a@b.example'] });
    expect(again.json).toEqual(conflictOn('/email-addresses', 'address', `${address} exists already.`));
    // The reseller sees end1's domain: for it the address exists as well.
    const reseller = await postEmail(t, x.reseller.token, { address, address_type: 'mailbox' });
    expect(reseller.json).toEqual(conflictOn('/email-addresses', 'address', `${address} exists already.`));
    for (const d of [x.end2.domain, x.solo.domain, 'nowhere.example']) {
      const r = await postEmail(t, token(), { address: `info@${d}`, address_type: 'mailbox' });
      expect(r.json, d).toEqual(notFoundAt(`${BASE}/email-addresses`, 'domain'));
    }
    const extra = await postEmail(t, token(), { address: `y@${domain()}`, address_type: 'mailbox', quota: 5 });
    expect(extra.status).toBe(422);
    expect(extra.json.errors[0].id).toBe('invalid_api_data');
  });

  it('IDN domains: stored in ACE, shown in Unicode with an address_ace twin; filters take either (API guide "E-mail addresses")', async () => {
    const { domain: idn } = await t.admin.domains.createDomain({ name: 'bücher-end1.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
    const r = await mailbox({ address: 'Info@Bücher-End1.example' });
    expect(r.json.data.attributes).toMatchObject({ address: 'info@bücher-end1.example', address_ace: 'info@xn--bcher-end1-9db.example' });
    expect(r.json.data.relationships.domain).toEqual({ data: { type: 'domain', id: idn } });
    for (const q of ['filter[address]=INFO@bücher-end1.example', 'filter[address]=info@xn--bcher-end1-9db.example', `filter[domain]=${encodeURIComponent('Bücher-End1.example')}`]) {
      const l = await call(t.app, 'GET', `/email-addresses?${q}`, { token: token() });
      expect(l.json.data.map((d: any) => d.id), q).toEqual([r.json.data.id]);
    }
  });

  it('addresses at an existing subdomain (any kind); not at one being deleted or missing (API guide "E-mail addresses")', async () => {
    const now = new Date().toISOString();
    const sub = await t.store.db
      .insertInto('subdomains')
      .values({ customer_id: Number(x.end1.customerId), package_id: Number(x.end1.packageId), domain: domain(), name: 'shop', kind: 'email', description: '', webspace_https: 0, redirect_dynamic: 0, redirect_https: 0, state: 'live', created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const r = await mailbox({ address: `sales@shop.${domain()}` });
    expect(r.json.data.attributes.address).toBe(`sales@shop.${domain()}`);
    expect(r.json.data.relationships.domain).toEqual({ data: { type: 'domain', id: domain() } });
    const byDomain = await call(t.app, 'GET', `/email-addresses?filter[domain]=shop.${domain()}`, { token: token() });
    expect(byDomain.json.data.map((d: any) => d.id)).toEqual([r.json.data.id]);
    const missing = await postEmail(t, token(), { address: `sales@blog.${domain()}`, address_type: 'mailbox' });
    expect(missing.json).toEqual(notFoundAt(`${BASE}/email-addresses`, 'domain'));
    await t.store.db.updateTable('subdomains').set({ state: 'deleting' }).where('id', '=', sub.id).execute();
    const gone = await postEmail(t, token(), { address: `other@shop.${domain()}`, address_type: 'mailbox' });
    expect(gone.json).toEqual(notFoundAt(`${BASE}/email-addresses`, 'domain'));
  });

  it('a package without a mail server is placed on the default at its first address; one that names a server keeps it (docs/decisions/0009-mail-directory.md "Mail servers are operator data; jobs wait for them")', async () => {
    await new MailServersRepository(t.store.db).add({ name: 'mx-named', doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'k2', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 0, created_at: new Date().toISOString() });
    const bad = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId: Number(x.end1.planId), name: 'nowhere', mailServer: 'mx-none' }).catch((e) => e);
    expect(bad).toMatchObject({ code: 'resource_not_found', message: 'No mail server is named "mx-none" (see `hostplane admin mail-server list`).' });
    const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId: Number(x.end1.planId), name: 'named', mailServer: 'mx-named' });
    const { domain: d } = await t.admin.domains.createDomain({ name: 'named-end1.example', customerId: Number(x.end1.customerId), packageId });
    const r = await postEmail(t, token(), { address: `info@${d}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const row = await t.store.db.selectFrom('email_addresses').select('mail_server_name').where('id', '=', Number(r.json.data.id)).executeTakeFirstOrThrow();
    expect(row.mail_server_name).toBe('mx-named');
    const pkg = await t.store.db.selectFrom('packages').select('mail_server_name').where('id', '=', Number(x.end1.packageId)).executeTakeFirstOrThrow();
    expect(pkg.mail_server_name).toBe('mx-test');
  });

  it('a plan change gives the package\'s mailboxes the new plan\'s quota, in the API and in the mail directory', async () => {
    const { planId } = await t.admin.packages.createPlan({ name: 'bigger boxes', mailboxQuotaMb: 4096 });
    const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId: Number(x.end1.planId), name: 'moving', linuxUser: 'u_moving' });
    const { domain: d } = await t.admin.domains.createDomain({ name: 'moving-end1.example', customerId: Number(x.end1.customerId), packageId });
    const r = await mailbox({ address: `info@${d}` });
    expect(r.json.data.attributes.quota.limit_bytes).toBe(2048 * MB);
    await t.admin.packages.setPackagePlan(packageId, planId);
    const g = await call(t.app, 'GET', `/email-addresses/${r.json.data.id}`, { token: token() });
    expect(g.json.data.attributes.quota).toEqual({ limit_bytes: 4096 * MB, used_bytes: null, updated_at: null });
    expect((await directory(`info@${d}`)).user?.quota_bytes).toBe(4096 * MB);
  });

  it('parallel writes on one address are not lost (forward targets, autoresponder keys)', async () => {
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['t0@other.example'] });
    const id = f.json.data.id;
    const adds = await Promise.all(Array.from({ length: 10 }, (_, i) => call(t.app, 'POST', `/email-addresses/${id}/forward-to/t${i + 1}@other.example`, { token: token() })));
    expect(adds.map((r) => r.status)).toEqual(Array(10).fill(204));
    const g = await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() });
    expect([...g.json.data.attributes.forward_to].sort()).toEqual(Array.from({ length: 11 }, (_, i) => `t${i}@other.example`).sort());
    expect((await directory(f.json.data.attributes.address_ace)).aliases).toEqual(Array.from({ length: 11 }, (_, i) => `t${i}@other.example`).sort());
    const m = await mailbox();
    const [p1, p2] = await Promise.all([
      patchEmail(t, token(), m.json.data.id, { autoresponder: { text: 'Away.' } }),
      patchEmail(t, token(), m.json.data.id, { autoresponder: { active: true } }),
    ]);
    expect([p1.status, p2.status]).toEqual([200, 200]);
    expect((await call(t.app, 'GET', `/email-addresses/${m.json.data.id}`, { token: token() })).json.data.attributes.autoresponder).toMatchObject({ text: 'Away.', active: true });
  });

  it('an application password left from an earlier address of the same name does not log in to a new one', async () => {
    const address = `${local()}@${domain()}`;
    await t.store.db.insertInto('mail_app_passwords').values({ address, secret_sha256: 'ab'.repeat(32), device: 'old', application: 'old', created_at: new Date().toISOString() }).execute();
    await mailbox({ address });
    expect(await t.store.db.selectFrom('mail_app_passwords').select('id').where('address', '=', address).execute()).toEqual([]);
  });

  it('a domain of another customer that has the name of one of your subdomains is not yours: 404', async () => {
    const now = new Date().toISOString();
    await t.store.db
      .insertInto('subdomains')
      .values({ customer_id: Number(x.end1.customerId), package_id: Number(x.end1.packageId), domain: domain(), name: 'taken', kind: 'email', description: '', webspace_https: 0, redirect_dynamic: 0, redirect_https: 0, state: 'live', created_at: now, updated_at: now })
      .execute();
    await t.admin.domains.createDomain({ name: `taken.${domain()}`, customerId: Number(x.solo.customerId), packageId: Number(x.solo.packageId) });
    const r = await postEmail(t, token(), { address: `info@taken.${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    expect(r.json).toEqual(notFoundAt(`${BASE}/email-addresses`, 'domain'));
    const own = await postEmail(t, x.solo.token, { address: `info@taken.${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    expect(own.status).toBe(202);
  });

  it('at max_email_addresses → 409 limit_reached; parallel POSTs never pass it (API guide "E-mail addresses")', async () => {
    const { planId } = await t.admin.packages.createPlan({ name: 'two addresses', maxEmailAddresses: 2 });
    const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId, name: 'small', linuxUser: 'u_small' });
    const { domain: d } = await t.admin.domains.createDomain({ name: 'small-end1.example', customerId: Number(x.end1.customerId), packageId });
    const tries = await Promise.all(Array.from({ length: 5 }, (_, i) => postEmail(t, token(), { address: `p${i}@${d}`, address_type: 'forward', forward_to: ['a@b.example'] })));
    expect(tries.map((r) => r.status).sort()).toEqual([202, 202, 409, 409, 409]);
    for (const r of tries.filter((y) => y.status === 409)) {
      expect(r.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached',
        'This package has reached its limit of 2 e-mail addresses (max_email_addresses of its plan).', `${BASE}/email-addresses`));
    }
  });

  it('PATCH → 200: description, antispam, one autoresponder key at a time; the rules of each (API guide "E-mail addresses")', async () => {
    const r = await mailbox();
    const id = r.json.data.id;
    const p = await patchEmail(t, token(), id, { description: null, antispam: 'junk-folder', autoresponder: { text: 'Away until Monday.' } });
    expect(p.status, p.body).toBe(200);
    const { password: _pw, ...attrs } = r.json.data.attributes;
    expect(p.json).toEqual({
      data: { ...r.json.data, attributes: { ...attrs, description: null, antispam: 'junk-folder', autoresponder: { text: 'Away until Monday.', active: false, activates: null, expires: null } },
        links: { self: `${BASE}/email-addresses/${id}` } },
      links: { self: `${BASE}/email-addresses/${id}` },
    });
    const tomorrow = new Date(Date.now() + 36 * 3600_000).toISOString().slice(0, 10);
    const later = new Date(Date.now() + 10 * 86400_000).toISOString().slice(0, 10);
    for (const [key, value] of [['active', true], ['activates', tomorrow], ['expires', later]] as const) {
      const s = await patchEmail(t, token(), id, { autoresponder: { [key]: value } });
      expect(s.json.data.attributes.autoresponder[key], key).toEqual(value);
    }
    expect((await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() })).json.data.attributes.autoresponder)
      .toEqual({ text: 'Away until Monday.', active: true, activates: tomorrow, expires: later });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ autoresponder: { text: 'a', active: true } }, 'autoresponder', 'Change exactly one of autoresponder.text, .active, .activates, .expires per request.'],
      [{ autoresponder: {} }, 'autoresponder', 'Change exactly one of autoresponder.text, .active, .activates, .expires per request.'],
      [{ autoresponder: { subject: 'x' } }, 'autoresponder/subject', 'autoresponder has no subject; it has text, active, activates, expires.'],
      [{ autoresponder: { active: 'yes' } }, 'autoresponder/active', 'autoresponder.active must be true or false.'],
      [{ autoresponder: { activates: '2026-02-30' } }, 'autoresponder/activates', 'autoresponder.activates must be a date YYYY-MM-DD or null.'],
      [{ autoresponder: { activates: '2020-01-01' } }, 'autoresponder/activates', expect.stringMatching(/^autoresponder.activates must not be in the past \(today is \d{4}-\d{2}-\d{2} in Germany\)\.$/) as unknown as string],
      [{ autoresponder: { activates: new Date(Date.now() + 20 * 86400_000).toISOString().slice(0, 10) } }, 'autoresponder/activates', expect.stringMatching(/must not be before autoresponder.activates/) as unknown as string],
      [{ address: 'new@x.example' }, 'address', 'address cannot be changed; create a new address instead.'],
      [{ address_type: 'forward' }, 'address_type', 'address_type cannot be changed; create a new address instead.'],
      [{ forward_to: ['a@b.example'] }, 'forward_to', 'forward_to changes one address at a time: POST or DELETE /email-addresses/{id}/forward-to/{address}.'],
      [{ antispam: 'sometimes' }, 'antispam', 'antispam must be one of reject, junk-folder, subject-rewrite, none.'],
    ];
    for (const [attributes, field, detail] of cases) {
      const e = await patchEmail(t, token(), id, attributes);
      expect(e.json, JSON.stringify(attributes)).toEqual(invalidAttribute(`/email-addresses/${id}`, field, detail));
    }
    // Dates back to null remove the scheduled changes (API guide "E-mail addresses").
    await patchEmail(t, token(), id, { autoresponder: { activates: null } });
    const cleared = await patchEmail(t, token(), id, { autoresponder: { expires: null } });
    expect(cleared.json.data.attributes.autoresponder).toEqual({ text: 'Away until Monday.', active: true, activates: null, expires: null });
    const mismatch = await call(t.app, 'PATCH', `/email-addresses/${id}`, { token: token(), body: { data: { type: 'email-address', id: '999', attributes: {} } } });
    expect(mismatch.status).toBe(409);
    expect(mismatch.json.errors[0].id).toBe('id_mismatch');
  });

  it('PATCH password: the directory verifies the new one only; forwards have none (422) (API guide "E-mail addresses", "Password rules")', async () => {
    const r = await mailbox();
    const a = r.json.data.attributes.address_ace;
    const p = await patchEmail(t, token(), r.json.data.id, { password: GOOD_PASSWORD });
    expect(p.status).toBe(200);
    expect(p.body).not.toContain(GOOD_PASSWORD);
    expect(p.json.data.attributes.password).toBeUndefined();
    expect(await verifies(a, GOOD_PASSWORD)).toBe(true);
    expect(await verifies(a, r.json.data.attributes.password)).toBe(false);
    const weak = await patchEmail(t, token(), r.json.data.id, { password: 'short' });
    expect(weak.status).toBe(422);
    expect(new Set(weak.json.errors.map((e: any) => e.id))).toEqual(new Set(['invalid_password']));
    expect(weak.json.errors.map((e: any) => e.detail)).toEqual(expect.arrayContaining(['The password must be at least 16 characters long.']));
    const long = await patchEmail(t, token(), r.json.data.id, { password: `${GOOD_PASSWORD}${'Kx7#'.repeat(14)}` });
    expect(long.json).toEqual(errorBody('invalid_password', 422, 'Invalid password', 'The password must be at most 72 characters long.', `${BASE}/email-addresses/${r.json.data.id}`, { pointer: '/data/attributes/password' }));
    expect(await verifies(a, GOOD_PASSWORD)).toBe(true);
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fp = await patchEmail(t, token(), f.json.data.id, { password: GOOD_PASSWORD });
    expect(fp.json).toEqual(invalidAttribute(`/email-addresses/${f.json.data.id}`, 'password', 'Only a mailbox has a password; a forward logs in nowhere.'));
    const fa = await patchEmail(t, token(), f.json.data.id, { autoresponder: { active: true } });
    expect(fa.json).toEqual(invalidAttribute(`/email-addresses/${f.json.data.id}`, 'autoresponder', 'Only a mailbox has an autoresponder.'));
  });

  it('POST …/password → 200 with a new generated password; the old one no longer verifies; 409 for a forward (API guide "E-mail addresses")', async () => {
    const r = await mailbox();
    const id = r.json.data.id;
    const p = await call(t.app, 'POST', `/email-addresses/${id}/password`, { token: token() });
    expect(p.status).toBe(200);
    const password = p.json.data.attributes.password;
    secrets.push(password);
    expect(password).toMatch(GENERATED);
    expect(password).not.toBe(r.json.data.attributes.password);
    expect(p.headers['content-location']).toBeUndefined();
    expect(p.json.data.links).toEqual({ self: `${BASE}/email-addresses/${id}` });
    expect(Object.keys(p.json.data.attributes)).toEqual([...ORDER, 'password']);
    expect(await verifies(r.json.data.attributes.address_ace, password)).toBe(true);
    expect(await verifies(r.json.data.attributes.address_ace, r.json.data.attributes.password)).toBe(false);
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fp = await call(t.app, 'POST', `/email-addresses/${f.json.data.id}/password`, { token: token() });
    expect(fp.json).toEqual(errorBody('invalid_state', 409, 'Not allowed in the current state', 'A forward has no password; only mailboxes do.', `${BASE}/email-addresses/${f.json.data.id}/password`));
  });

  it('forward-to: add (204, once), remove (204), unknown target 404, a forward keeps its last one (409); alias rows follow (API guide "E-mail addresses")', async () => {
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const id = f.json.data.id;
    const a = f.json.data.attributes.address_ace;
    const add = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/${encodeURIComponent('sales+eu@b.example')}`, { token: token() });
    expect([add.status, add.body]).toEqual([204, '']);
    const raw = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/sales+eu@B.example`, { token: token() });
    expect(raw.status).toBe(204);
    const g = await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() });
    expect(g.json.data.attributes.forward_to).toEqual(['a@b.example', 'sales+eu@b.example']);
    expect((await directory(a)).aliases).toEqual(['a@b.example', 'sales+eu@b.example']);
    const bad = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/nonsense`, { token: token() });
    expect(bad.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data', 'nonsense is not an e-mail address.', `${BASE}/email-addresses/${id}/forward-to/nonsense`, { parameter: 'target' }));
    for (const target of [a, a.replace('@', '+x@')]) {
      const self = await call(t.app, 'POST', `/email-addresses/${id}/forward-to/${target}`, { token: token() });
      expect(self.json.errors[0], target).toMatchObject({ id: 'invalid_api_data', detail: 'An address cannot forward to itself.' });
    }
    const del = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/a@b.example`, { token: token() });
    expect(del.status).toBe(204);
    const missing = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/a@b.example`, { token: token() });
    expect(missing.json).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'a@b.example is not a forwarding target of this address.', `${BASE}/email-addresses/${id}/forward-to/a@b.example`));
    const last = await call(t.app, 'DELETE', `/email-addresses/${id}/forward-to/sales%2Beu@b.example`, { token: token() });
    expect(last.json.errors[0]).toMatchObject({ id: 'invalid_state', status: '409', detail: 'A forward needs at least one target: add another first, or delete the forward.' });
    expect((await directory(a)).aliases).toEqual(['sales+eu@b.example']);
    // A mailbox's targets: its own row appears with the first and goes with the last.
    const m = await mailbox();
    const ma = m.json.data.attributes.address_ace;
    await call(t.app, 'POST', `/email-addresses/${m.json.data.id}/forward-to/c@d.example`, { token: token() });
    expect((await directory(ma)).aliases).toEqual(['c@d.example', ma].sort());
    expect((await call(t.app, 'DELETE', `/email-addresses/${m.json.data.id}/forward-to/c@d.example`, { token: token() })).status).toBe(204);
    expect((await directory(ma)).aliases).toEqual([]);
  });

  it('application passwords: 201 with the password once, the list without it, DELETE 204 then 404; only mailboxes (API guide "E-mail addresses")', async () => {
    const m = await mailbox();
    const id = m.json.data.id;
    const r = await postAppPassword(t, token(), id, { device: 'Laptop', application: 'Thunderbird' });
    expect(r.status, r.body).toBe(201);
    const password = r.json.data.attributes.password;
    secrets.push(password);
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    const appId = r.json.data.id;
    expect(r.json).toEqual({
      data: { type: 'application-password', id: expect.stringMatching(/^[0-9]+$/), attributes: { device: 'Laptop', application: 'Thunderbird', password, created_at: expect.any(String) },
        links: { self: `${BASE}/email-addresses/${id}/application-passwords/${appId}` } },
      links: { self: `${BASE}/email-addresses/${id}/application-passwords` },
    });
    const row = await t.store.db.selectFrom('mail_app_passwords').selectAll().where('id', '=', Number(appId)).executeTakeFirstOrThrow();
    expect(row.secret_sha256).toBe(crypto.createHash('sha256').update(password).digest('hex'));
    const l = await call(t.app, 'GET', `/email-addresses/${id}/application-passwords`, { token: token() });
    expect(l.json).toEqual({
      links: { self: `${BASE}/email-addresses/${id}/application-passwords` },
      data: [{ type: 'application-password', id: appId, attributes: { device: 'Laptop', application: 'Thunderbird', created_at: r.json.data.attributes.created_at, last_used_at: null },
        links: { self: `${BASE}/email-addresses/${id}/application-passwords/${appId}` } }],
      meta: { total: 1 },
    });
    for (const [attributes, field, detail] of [
      [{ device: '', application: 'x' }, 'device', 'device must be a non-empty text.'],
      [{ device: 'x', application: '  ' }, 'application', 'application must be a non-empty text.'],
      [{ device: 'x'.repeat(256), application: 'x' }, 'device', 'device must be at most 255 characters.'],
    ] as const) {
      const e = await postAppPassword(t, token(), id, attributes);
      expect(e.json).toEqual(invalidAttribute(`/email-addresses/${id}/application-passwords`, field, detail));
    }
    const d = await call(t.app, 'DELETE', `/email-addresses/${id}/application-passwords/${appId}`, { token: token() });
    expect([d.status, d.body]).toEqual([204, '']);
    const again = await call(t.app, 'DELETE', `/email-addresses/${id}/application-passwords/${appId}`, { token: token() });
    expect(again.json).toEqual(notFoundAt(`${BASE}/email-addresses/${id}/application-passwords/${appId}`, 'application-password'));
    const f = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'forward', forward_to: ['a@b.example'] });
    const fa = await postAppPassword(t, token(), f.json.data.id, { device: 'x', application: 'y' });
    expect(fa.json.errors[0]).toMatchObject({ id: 'invalid_state', status: '409' });
  });

  it('last_used_at: set by a mail server\'s login report (the key derived from its doveadm key), not by a failed login, a wrong key or another address', async () => {
    const m = await mailbox();
    const id = m.json.data.id;
    const a = await postAppPassword(t, token(), id, { device: 'Phone', application: 'Mail' });
    secrets.push(a.json.data.attributes.password);
    const report = (key: string, body: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST', url: '/internal/mail-auth-report?command=report',
        headers: { 'content-type': 'application/json', 'x-hostplane-mail-key': key }, payload: body,
      });
    const used = async () => (await call(t.app, 'GET', `/email-addresses/${id}/application-passwords`, { token: token() })).json.data[0].attributes.last_used_at;
    const login = m.json.data.attributes.address_ace;
    const other = (await mailbox()).json.data.attributes.address_ace;
    for (const [key, body] of [
      ['wrong-key', { login, app_password_id: a.json.data.id, success: true }],
      // The doveadm key itself is not the report key.
      ['not-used', { login, app_password_id: a.json.data.id, success: true }],
      [mailReportKey('not-used'), { login, app_password_id: a.json.data.id, success: false }],
      [mailReportKey('not-used'), { login: other, app_password_id: a.json.data.id, success: true }],
      [mailReportKey('not-used'), { login, app_password_id: '', success: true }],
    ] as const) {
      const r = await report(key, body);
      expect([r.statusCode, r.json()]).toEqual([200, { status: 0 }]);
      expect(await used(), JSON.stringify(body)).toBeNull();
    }
    await report(mailReportKey('not-used'), { login: login.toUpperCase(), app_password_id: a.json.data.id, success: true, policy_reject: false, tls: false });
    expect(Date.parse(await used())).toBeGreaterThan(Date.now() - 60_000);
  });

  it('DELETE → 202 with the job; the directory entry is inactive at once; a repeated DELETE answers the same job; writes then → 409 (API guide "E-mail addresses")', async () => {
    const m = await mailbox({ forward_to: ['keep@other.example'] });
    const id = m.json.data.id;
    const a = m.json.data.attributes.address_ace;
    const d = await call(t.app, 'DELETE', `/email-addresses/${id}`, { token: token() });
    expect(d.status).toBe(202);
    expect(d.json.data).toMatchObject({ type: 'queue-job', attributes: { job_type: 'email-address', status: 'pending', action: 'delete' } });
    expect(d.headers['content-location']).toBe(`${BASE}/queue-jobs/${d.json.data.id}`);
    const dir = await directory(a);
    expect(dir.user?.active).toBe(0);
    expect(dir.aliases).toEqual([]);
    const again = await call(t.app, 'DELETE', `/email-addresses/${id}`, { token: token() });
    expect(again.json.data.id).toBe(d.json.data.id);
    const p = await patchEmail(t, token(), id, { description: 'x' });
    expect(p.json.errors[0]).toMatchObject({ id: 'invalid_state', detail: 'This address is being deleted.' });
    const reuse = await postEmail(t, token(), { address: a, address_type: 'mailbox' });
    expect(reuse.status).toBe(409);
  });

  it('list filters: package_id, address (repeat, commas, any case), domain; paging; tenancy (404 outside the scope) (API guide "Filters and paging")', async () => {
    const a = (await mailbox()).json.data;
    const b = (await mailbox()).json.data;
    const q = (s: string) => call(t.app, 'GET', `/email-addresses?${s}`, { token: token() });
    const A = a.attributes.address.toUpperCase().replace(domain().toUpperCase(), domain());
    expect((await q(`filter[address]=${A},${b.attributes.address}`)).json.data.map((d: any) => d.id)).toEqual([a.id, b.id]);
    expect((await q(`filter[address]=${A}&filter[address]=${b.attributes.address}`)).json.meta.total).toBe(2);
    expect((await q(`filter[address]=${A}&filter[domain]=${x.end2.domain}`)).json.meta.total).toBe(0);
    expect((await q(`filter[package_id]=${x.end2.packageId}`)).json.meta.total).toBe(0);
    expect((await q('filter[address]=nonsense')).json.meta.total).toBe(0);
    const paged = await q(`filter[package_id]=${x.end1.packageId}&page[size]=1&page[number]=1`);
    expect(paged.json.data).toHaveLength(1);
    expect(paged.json.meta.page).toMatchObject({ number: 1, size: 1 });
    const unknown = await q('filter[owner]=1');
    expect(unknown.status).toBe(400);
    // end2 (another customer of the same reseller) sees none of it; the reseller sees it.
    for (const path of [`/email-addresses/${a.id}`, `/email-addresses/${a.id}/application-passwords`]) {
      const r = await call(t.app, 'GET', path, { token: x.end2.token });
      expect(r.json, path).toEqual(notFoundAt(`${BASE}${path}`, 'email-address'));
    }
    expect((await call(t.app, 'GET', '/email-addresses', { token: x.end2.token })).json.meta.total).toBe(0);
    expect((await call(t.app, 'GET', `/email-addresses/${a.id}`, { token: x.reseller.token })).status).toBe(200);
  });

  it('no plaintext password in any table or job payload (generated, chosen, application passwords)', async () => {
    secrets.push(GOOD_PASSWORD);
    const tables = ['email_addresses', 'mail_users', 'mail_app_passwords', 'mail_aliases', 'queue_jobs', 'contacts'];
    for (const table of tables) {
      const rows = (await sql.raw(`select * from ${table}`).execute(t.store.db)).rows;
      const text = JSON.stringify(rows);
      for (const s of secrets) expect(text.includes(s), `${s} in ${table}`).toBe(false);
    }
  });
});
