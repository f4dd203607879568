// /email-addresses created through HTTP on both engines, without a mail server (API guide "E-mail
// addresses", "Password rules", "Queue jobs"): the answers' whole shapes, every rule of a new
// address, the mail directory each write leaves (the rows Dovecot and Postfix read), limits, and no
// plaintext password anywhere. Changes to an address: changes.test.ts; what the mail servers do
// with the directory: mail.test.ts.
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { conflictOn, errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { GOOD_PASSWORD, patchEmail, postEmail } from '../../helpers/email.js';
import { runCli } from '../../helpers/cli.js';
import { MailServersRepository } from '../../../src/provisioning/mail/servers.repository.js';
import { useEmailSuite } from '../../helpers/email-suite.js';

const GENERATED = /^[A-Za-z0-9][A-Za-z0-9._-]{18}[A-Za-z0-9]$/;
const ORDER = ['address', 'address_ace', 'address_type', 'description', 'antispam', 'forward_to', 'autoresponder', 'quota', 'created_at'];
const MB = 1024 * 1024;

describe.each(ENGINES)('/email-addresses on %s', { timeout: 60_000 }, (engine) => {
  const { t, x, store, secrets, token, domain, local, directory, verifies, mailbox, expectNoPlaintext } = useEmailSuite(engine);

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
    const address = `portal-${local()}@${domain()}`;
    const { contactId } = await t.admin.customers.createContact(Number(x.end1.customerId), { name: 'Portal User', email: address.toUpperCase() });
    const portal = 'Zq8#nW3!yC5?tL2&';
    const set = await runCli(['admin', 'contact', 'set-portal-password', String(contactId), '--password-stdin'], { DATABASE_URL: store.databaseUrl, LOG_LEVEL: 'silent' }, { stdin: `${portal}\n` });
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


  it('no plaintext password in any table or job payload (generated, chosen, application passwords)', () => expectNoPlaintext([GOOD_PASSWORD]));
});
