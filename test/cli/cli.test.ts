// The `hostplane` command (API guide "Authentication"; docs/operator-guide.md "Settings") against a
// new SQLite file and (with TEST_DATABASE_URL) a new PostgreSQL schema named by
// `DATABASE_URL=…?schema=<name>`. Effects are checked through the HTTP API of an app built on the
// same database.
//
// How commands are run: `run()` calls `main(argv, { stdout, stderr, env })` from src/main.ts in
// this process (test/helpers/cli.ts): the same commander program, arguments, settings parsing,
// output and exit code as the binary, with the settings given only through `env` and the output
// captured. Only `serve`, which keeps running until it is signalled, starts as a child process
// (`node --import tsx src/main.ts serve`), once for its scenario.
import { MIGRATION_NAMES } from '../../src/db/migrate.js';
import { exec } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { verifyLegacyPassword } from '../../src/auth/legacy-password.js';
import { wantsDemoData } from '../../src/cli/serve.js';
import { ENGINES, call } from '../helpers/app.js';
import { apiOn, freePort, newDatabase, runCli, spawnCli, type CliRun, type TestDb } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const BASE_URL = 'http://cli.test';

const ID = expect.stringMatching(/^[1-9][0-9]*$/);
const TOKEN = expect.stringMatching(/^hp_[A-Za-z0-9]{40}$/);
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const CUSTOMER_KEYS = ['id', 'role', 'reseller_id', 'token', 'package_id', 'domain', 'legacy_password'];

type Run = CliRun;

/** `hostplane <args>` as a child process, for `serve`; none of the settings of the test process leak in. */
function hostplane(args: string[], env: Record<string, string>) {
  return spawnCli(args, { PUBLIC_BASE_URL: BASE_URL, ...env });
}

/** Runs `hostplane <args>` to its end, in this process. */
function run(args: string[], env: Record<string, string>): Promise<Run> {
  return runCli(args, { PUBLIC_BASE_URL: BASE_URL, ...env });
}

/** Runs a command that must succeed with `--json` and returns the parsed output. */
async function json(args: string[], env: Record<string, string>): Promise<any> {
  const r = await run([...args, '--json'], env);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  // One compact JSON value on one line, as the API writes it (API guide "Compatibility with
  // existing clients").
  const value = JSON.parse(r.stdout);
  expect(r.stdout).toBe(`${JSON.stringify(value)}\n`);
  return value;
}

// The engines, and the independent groups within one, run side by side (each on its own
// database): steps wait on PostgreSQL and on the `serve` child, so they overlap; steps that build
// on each other stay in order (describe.sequential). `serve` starts a TypeScript process, which
// may take seconds on a loaded machine, hence the generous timeout.
describe.concurrent.each(ENGINES)('hostplane CLI on %s', { timeout: 120_000 }, (engine) => {
  describe.sequential('demo (docs/operator-guide.md "The operator CLI")', () => {
    let db: TestDb;
    let first: Run;
    beforeAll(async () => {
      db = await newDatabase(engine);
      first = await run(['demo', '--json'], { DATABASE_URL: db.url });
    });
    afterAll(() => db.drop());

    it('demo --json migrates the new database and prints the dataset object exactly', () => {
      expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
      const data = JSON.parse(first.stdout);
      expect(first.stdout).toBe(`${JSON.stringify(data)}\n`);
      expect(Object.keys(data)).toEqual(['base_url', 'customers']);
      for (const c of data.customers) expect(Object.keys(c)).toEqual(CUSTOMER_KEYS);
      const reseller = data.customers[0];
      expect(data).toEqual({
        base_url: BASE_URL,
        customers: [
          { id: ID, role: 'reseller', reseller_id: null, token: TOKEN, package_id: ID, domain: 'reseller-demo.example', legacy_password: expect.stringMatching(/^[A-Za-z0-9]{24}$/) },
          { id: ID, role: 'end-customer', reseller_id: reseller.id, token: TOKEN, package_id: ID, domain: 'shop-demo.example', legacy_password: null },
          { id: ID, role: 'end-customer', reseller_id: reseller.id, token: TOKEN, package_id: ID, domain: 'blog-demo.example', legacy_password: null },
          { id: ID, role: 'customer', reseller_id: null, token: TOKEN, package_id: ID, domain: 'solo-demo.example', legacy_password: null },
        ],
      });
      const distinct = (k: string) => new Set(data.customers.map((c: any) => c[k])).size;
      expect([distinct('id'), distinct('token'), distinct('package_id')]).toEqual([4, 4, 4]);
    });

    it('each demo customer has a plan, a package and a registered presence domain; the tokens and the legacy password work', async () => {
      const data = JSON.parse(first.stdout);
      const [reseller, shop, blog, solo] = data.customers;
      for (const c of data.customers) {
        const domain = await db.store.db.selectFrom('domains').selectAll().where('name', '=', c.domain).executeTakeFirstOrThrow();
        expect(domain).toMatchObject({ customer_id: Number(c.id), package_id: Number(c.package_id), has_presence: 1, is_registered: 1 });
        const pkg = await db.store.db.selectFrom('packages').selectAll().where('id', '=', Number(c.package_id)).executeTakeFirstOrThrow();
        expect(pkg.customer_id).toBe(Number(c.id));
        const plan = await db.store.db.selectFrom('plans').selectAll().where('id', '=', pkg.plan_id).executeTakeFirstOrThrow();
        // End customers buy the plan their reseller sells.
        expect(plan.reseller_id).toBe(c.role === 'end-customer' ? Number(reseller.id) : null);
      }
      const row = await db.store.db.selectFrom('customers').select('legacy_password_hash').where('id', '=', Number(reseller.id)).executeTakeFirstOrThrow();
      expect(row.legacy_password_hash).not.toContain(reseller.legacy_password);
      expect(await verifyLegacyPassword(reseller.legacy_password, row.legacy_password_hash!)).toBe(true);

      const { app, close } = await apiOn(db.store, BASE_URL);
      try {
        const ids = async (token: string) => (await call(app, 'GET', '/customers', { token })).json.data.map((c: any) => c.id);
        expect(await ids(reseller.token)).toEqual([reseller.id, shop.id, blog.id]);
        expect(await ids(shop.token)).toEqual([shop.id]);
        expect(await ids(blog.token)).toEqual([blog.id]);
        expect(await ids(solo.token)).toEqual([solo.id]);
      } finally {
        await close();
      }
    });

    it('demo refuses a database that already has customers (exit 1, one line, nothing changed)', async () => {
      const refusal = 'the database .+ already has customers; `hostplane demo` loads the demo dataset only into a new database .+';
      const [text, json] = await Promise.all([run(['demo'], { DATABASE_URL: db.url }), run(['demo', '--json'], { DATABASE_URL: db.url })]);
      expect({ code: text.code, stdout: text.stdout }).toEqual({ code: 1, stdout: '' });
      expect(text.stderr).toMatch(new RegExp(`^hostplane: ${refusal}\n$`));
      // With --json the refusal is JSON too.
      expect({ code: json.code, stdout: json.stdout }).toEqual({ code: 1, stdout: '' });
      expect(json.stderr).toBe(`${JSON.stringify(JSON.parse(json.stderr))}\n`);
      expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'invalid_state', message: expect.stringMatching(new RegExp(`^${refusal}$`)) } });
      const { n } = await db.store.db.selectFrom('customers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(n)).toBe(4);
    });
  });

  describe.sequential('admin (API guide "Authentication")', () => {
    let db: TestDb;
    let env: Record<string, string>;
    let api: Awaited<ReturnType<typeof apiOn>>;
    // Filled in as the tests build the operator's world step by step.
    const w: Record<string, any> = {};
    beforeAll(async () => {
      db = await newDatabase(engine);
      env = { DATABASE_URL: db.url };
    });
    afterAll(async () => {
      await api?.close();
      await db.drop();
    });

    it('migrate applies the schema once, then reports it up to date', async () => {
      expect(await json(['migrate'], env)).toEqual({ database: expect.any(String), applied: MIGRATION_NAMES });
      expect(await json(['migrate'], env)).toEqual({ database: expect.any(String), applied: [] });
      api = await apiOn(db.store, BASE_URL);
    });

    it('customer create / list with --json, with a reseller link', async () => {
      w.reseller = await json(['admin', 'customer', 'create', '--org', 'Acme Hosting', '--name', 'Ann Admin', '--email', 'ann@acme.example', '--phone', '+49 30 1', '--reseller'], env);
      expect(w.reseller).toEqual({
        id: ID, organization: 'Acme Hosting', name: 'Ann Admin', email: 'ann@acme.example', phone: '+49 30 1',
        is_reseller: true, reseller_id: null, is_login_disabled: false, external_customer_id: null,
        has_legacy_password: false, main_contact_id: ID, created_at: ISO,
      });
      w.end = await json(['admin', 'customer', 'create', '--name', 'Ed End', '--email', 'ed@end.example', '--reseller-id', w.reseller.id], env);
      expect(w.end).toEqual({
        id: ID, organization: null, name: 'Ed End', email: 'ed@end.example', phone: null,
        is_reseller: false, reseller_id: w.reseller.id, is_login_disabled: false, external_customer_id: null,
        has_legacy_password: false, main_contact_id: ID, created_at: ISO,
      });
      const [list, notReseller] = await Promise.all([
        json(['admin', 'customer', 'list'], env),
        run(['admin', 'customer', 'create', '--name', 'X', '--email', 'x@x.example', '--reseller-id', w.end.id], env),
      ]);
      expect(list).toEqual([w.reseller, w.end]);
      expect(notReseller).toEqual({ code: 1, stdout: '', stderr: `hostplane: Customer ${w.end.id} is not a reseller.\n` });
    });

    it('plan, package and domain create / list with --json', async () => {
      w.plan = await json(['admin', 'plan', 'create', '--name', 'Starter', '--max-databases', '3', '--max-email-addresses', '0', '--php-versions', '8.3,8.4', '--reseller-id', w.reseller.id], env);
      expect(w.plan).toEqual({
        id: ID, name: 'Starter', reseller_id: w.reseller.id, max_databases: 3, max_email_addresses: 0, mailbox_quota_mb: 2048,
        max_subdomains: 20, webspace_mb: 10240, database_versions: ['mariadb-10.11'], php_versions: ['8.3', '8.4'], dmarc_policy: 'quarantine', recipients_per_hour: 500, ssh_keys_per_package: 10, created_at: ISO,
      });
      w.pkg = await json(['admin', 'package', 'create', '--customer', w.end.id, '--plan', w.plan.id, '--name', 'Web', '--linux-user', 'web_ed'], env);
      expect(w.pkg).toEqual({ id: ID, name: 'Web', customer_id: w.end.id, plan_id: w.plan.id, linux_user: 'web_ed', web_server: null, mail_server: null, created_at: ISO });
      w.idn = await json(['admin', 'domain', 'create', '--name', 'Bücher-Ed.example', '--customer', w.end.id, '--package', w.pkg.id, '--registered'], env);
      expect(w.idn).toEqual({
        id: 'xn--bcher-ed-65a.example', name: 'bücher-ed.example', customer_id: w.end.id, package_id: w.pkg.id,
        registered: true, expires_at: ISO, presence: true, created_at: ISO,
      });
      w.regOnly = await json(['admin', 'domain', 'create', '--name', 'acme.example', '--customer', w.reseller.id, '--registered'], env);
      expect(w.regOnly).toEqual({
        id: 'acme.example', name: 'acme.example', customer_id: w.reseller.id, package_id: null,
        registered: true, expires_at: ISO, presence: false, created_at: ISO,
      });
      const [plans, packages, domains, neither] = await Promise.all([
        json(['admin', 'plan', 'list'], env),
        json(['admin', 'package', 'list'], env),
        json(['admin', 'domain', 'list'], env),
        run(['admin', 'domain', 'create', '--name', 'nowhere.example', '--customer', w.end.id], env),
      ]);
      expect(plans).toEqual([w.plan]);
      expect(packages).toEqual([w.pkg]);
      expect(domains).toEqual([w.regOnly, w.idn]);
      expect(neither).toEqual({ code: 1, stdout: '', stderr: 'hostplane: A domain is registered, assigned to a package (presence), or both.\n' });
    });

    it('token create prints the token once; list shows the prefix only; revoke makes it 401 at once', async () => {
      w.token = await json(['admin', 'token', 'create', '--contact', w.end.main_contact_id, '--label', 'ci'], env);
      expect(w.token).toEqual({
        id: ID, contact_id: w.end.main_contact_id, customer_id: w.end.id, prefix: w.token.token.slice(0, 9),
        label: 'ci', scope: 'full', read_only: false, domains: null, acme_challenge: false, allow_ips: null, expires_at: null, last_used_at: null,
        created_at: ISO, revoked_at: null, token: TOKEN,
      });
      const ok = await call(api.app, 'GET', `/customers/${w.end.id}`, { token: w.token.token });
      expect(ok.status).toBe(200);
      expect(ok.json.data).toMatchObject({ id: w.end.id, attributes: { name: 'Ed End', email: 'ed@end.example' } });

      const listRun = await run(['admin', 'token', 'list', '--contact', w.end.main_contact_id, '--json'], env);
      // The GET above was its first use (API guide "Scoped tokens": last_used_at).
      const { token: _secret, ...created } = w.token;
      const listed = { ...created, last_used_at: ISO };
      expect(JSON.parse(listRun.stdout)).toEqual([listed]);
      expect(listRun.stdout).not.toContain(w.token.token);
      expect(listRun.stdout).not.toMatch(/hash/);

      const revoked = await json(['admin', 'token', 'revoke', w.token.id], env);
      expect(revoked).toEqual({ ...listed, revoked_at: ISO });
      const denied = await call(api.app, 'GET', `/customers/${w.end.id}`, { token: w.token.token });
      expect(denied.status).toBe(401);
      expect(denied.json.errors[0]).toMatchObject({ id: 'unauthorized', status: '401' });
      expect(await run(['admin', 'token', 'revoke', w.token.id], env)).toEqual({ code: 1, stdout: '', stderr: `hostplane: No active token ${w.token.id}.\n` });
    });

    it('contact delete makes the contact\'s token 401 at once (API guide "Authentication"); the main contact stays', async () => {
      const contact = await json(['admin', 'contact', 'create', '--customer', w.end.id, '--name', 'Tina Tech', '--email', 'tina@end.example'], env);
      expect(contact).toEqual({ id: ID, customer_id: w.end.id, name: 'Tina Tech', email: 'tina@end.example', phone: null, is_main: false, created_at: ISO });
      const { token } = await json(['admin', 'token', 'create', '--contact', contact.id], env);
      expect((await call(api.app, 'GET', '/customers', { token })).status).toBe(200);

      expect(await json(['admin', 'contact', 'delete', contact.id], env)).toEqual({ id: contact.id, deleted: true });
      const r = await call(api.app, 'GET', '/customers', { token });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Basic realm="API"');

      const [contacts, mainDelete] = await Promise.all([
        json(['admin', 'contact', 'list', '--customer', w.end.id], env),
        run(['admin', 'contact', 'delete', w.end.main_contact_id], env),
      ]);
      expect(contacts).toEqual([{ id: w.end.main_contact_id, customer_id: w.end.id, name: 'Ed End', email: 'ed@end.example', phone: null, is_main: true, created_at: ISO }]);
      // A user error: one line, no stack trace.
      expect(mainDelete).toEqual({ code: 1, stdout: '', stderr: 'hostplane: The main contact of a customer cannot be deleted.\n' });
    });

    it('reseller set-legacy-password generates one, prints it once and stores only its hash', async () => {
      const out = await json(['admin', 'reseller', 'set-legacy-password', '--customer', w.reseller.id], env);
      expect(out).toEqual({ customer_id: w.reseller.id, generated: true, legacy_password: expect.stringMatching(/^[A-Za-z0-9]{24}$/) });
      const row = await db.store.db.selectFrom('customers').select('legacy_password_hash').where('id', '=', Number(w.reseller.id)).executeTakeFirstOrThrow();
      expect(await verifyLegacyPassword(out.legacy_password, row.legacy_password_hash!)).toBe(true);

      const [given, tooShort, notReseller] = await Promise.all([
        json(['admin', 'reseller', 'set-legacy-password', '--customer', w.reseller.id, '--password', 'a-long-legacy-secret'], env),
        run(['admin', 'reseller', 'set-legacy-password', '--customer', w.reseller.id, '--password', 'short'], env),
        run(['admin', 'reseller', 'set-legacy-password', '--customer', w.end.id], env),
      ]);
      expect(given).toEqual({ customer_id: w.reseller.id, generated: false, legacy_password: null });
      expect(tooShort).toEqual({ code: 1, stdout: '', stderr: 'hostplane: A legacy password needs at least 12 characters.\n' });
      expect(notReseller).toEqual({ code: 1, stdout: '', stderr: 'hostplane: Only resellers have a legacy API password.\n' });
      const after = await db.store.db.selectFrom('customers').select('legacy_password_hash').where('id', '=', Number(w.reseller.id)).executeTakeFirstOrThrow();
      expect(await verifyLegacyPassword('a-long-legacy-secret', after.legacy_password_hash!)).toBe(true);
    });

    it('unknown ids and malformed ids fail with one line and exit 1', async () => {
      const [unknown, malformed, customerList] = await Promise.all([
        run(['admin', 'package', 'create', '--customer', '99999', '--plan', w.plan.id, '--name', 'x', '--json'], env),
        run(['admin', 'token', 'revoke', 'abc'], env),
        run(['admin', 'customer', 'list'], env),
      ]);
      expect(unknown).toEqual({ code: 1, stdout: '', stderr: '{"error":{"code":"resource_not_found","message":"No customer 99999."}}\n' });
      expect(malformed.code).toBe(1);
      expect(malformed.stderr).toMatch(/^error: .*'abc'.* must be a positive whole number\.\n$/);
      // Without --json: a table for people.
      expect(customerList.code).toBe(0);
      expect(customerList.stdout.split('\n')[0]).toMatch(/^id +organization +name +email +is_reseller/);
      expect(customerList.stdout).toContain('Ann Admin');
    });
  });

  it('serve on a new database with DEMO_DATA=on prints a curl command that works, and stops cleanly on SIGTERM', async () => {
    const db = await newDatabase(engine);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = hostplane(['serve'], { DATABASE_URL: db.url, DEMO_DATA: 'on', HOST: '127.0.0.1', PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn', DNS_LISTEN: 'off' });
    // Also when the test times out (its finally then never runs).
    onTestFinished(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const curl = await new Promise<string>((resolve, reject) => {
        const lines = readline.createInterface({ input: child.stdout });
        lines.on('line', (line) => {
          if (line.trim().startsWith('curl ')) resolve(line.trim());
        });
        exited.then(() => reject(new Error(`serve exited early: ${stderr}`)));
      });
      expect(curl).toMatch(new RegExp(`^curl -s -H 'Authorization: token hp_[A-Za-z0-9]{40}' '${base}/customers'$`));
      // The banner comes before the API answers (test/cli/serve-start.test.ts): a moment later,
      // pasted into a shell, as a newcomer would.
      await waitFor('serve to answer', () => fetch(`${base}/healthz`).then((r) => r.ok, () => false), 60_000);
      const { stdout } = await promisify(exec)(curl);
      const body = JSON.parse(stdout);
      expect(body.links).toEqual({ self: `${base}/customers` });
      expect(body.data.map((c: any) => c.attributes.organization)).toEqual(['Reseller Demo GmbH', 'Shop Demo UG', 'Blog Demo e.K.']);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await db.drop();
    }
  });
});

describe('settings', () => {
  it('invalid settings are all reported together and exit 2', async () => {
    const r = await run(['serve'], { PORT: 'abc', RATE_LIMIT_MAX: '-1', DATABASE_URL: path.join(os.tmpdir(), 'never-opened.db') });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('hostplane: invalid settings:');
    expect(lines.some((l) => /^ {2}- PORT: /.test(l))).toBe(true);
    expect(lines.some((l) => /^ {2}- RATE_LIMIT_MAX: /.test(l))).toBe(true);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(os.tmpdir(), 'never-opened.db'))).toBe(false);
  });

  it('DEMO_DATA: auto loads the demo only into the embedded default database', () => {
    expect(wantsDemoData(loadConfig({}))).toBe(true);
    expect(wantsDemoData(loadConfig({ DATABASE_URL: '/srv/hostplane/prod.db' }))).toBe(false);
    expect(wantsDemoData(loadConfig({ DATABASE_URL: 'postgres://db/hostplane' }))).toBe(false);
    expect(wantsDemoData(loadConfig({ DATABASE_URL: 'postgres://db/hostplane', DEMO_DATA: 'on' }))).toBe(true);
    expect(wantsDemoData(loadConfig({ DEMO_DATA: 'off' }))).toBe(false);
  });
});
