// `hostplane admin token create|list` with scopes (API guide "Scoped tokens"; docs/operator-guide.md
// "The operator CLI"), run in-process on each engine: the scope options stored and shown, the list
// with scope, expiry and last use, and every refusal of a bad option, which stores no token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call } from '../helpers/app.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe.each(ENGINES)('hostplane admin token (scopes) on %s', (engine) => {
  let db: TestDb;
  let end: { id: string; main_contact_id: string };
  let other: { id: string };
  const env = () => ({ DATABASE_URL: db.url, PUBLIC_BASE_URL: 'http://cli.test' });
  const json = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env());
    expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  const tokenRows = () => db.store.db.selectFrom('api_tokens').select('id').execute();

  beforeAll(async () => {
    db = await newDatabase(engine);
    expect((await runCli(['migrate'], env())).code).toBe(0);
    const plan = await json(['admin', 'plan', 'create', '--name', 'Basic']);
    end = await json(['admin', 'customer', 'create', '--name', 'Ed End', '--email', 'ed@end.example']);
    other = await json(['admin', 'customer', 'create', '--name', 'Otto Other', '--email', 'otto@other.example']);
    for (const [customer, name] of [[end, 'end.example'], [end, 'bücher.example'], [other, 'other.example']] as const) {
      const pkg = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', name, '--linux-user', `u_${customer.id}_${name.length}`]);
      await json(['admin', 'domain', 'create', '--name', name, '--customer', customer.id, '--package', pkg.id]);
    }
  });
  afterAll(() => db?.drop());

  it('create stores the scope and prints it once with the token; list shows scope, expiry and last use', async () => {
    const created = await json([
      'admin', 'token', 'create', '--contact', end.main_contact_id, '--label', 'lego', '--acme-challenge', '--domain', 'END.example', '--domain', 'bücher.example',
      '--expires', '2099-01-31', '--allow-ip', '192.0.2.0/24', '--allow-ip', '2001:DB8::1',
    ]);
    expect(created).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/), contact_id: end.main_contact_id, customer_id: end.id, prefix: created.token.slice(0, 9), label: 'lego',
      scope: 'acme-challenge; domains end.example,xn--bcher-kva.example; from 192.0.2.0/24,2001:db8::1/128',
      read_only: false, domains: ['end.example', 'xn--bcher-kva.example'], acme_challenge: true, allow_ips: ['192.0.2.0/24', '2001:db8::1/128'],
      expires_at: '2099-01-30T23:00:00.000Z', last_used_at: null, created_at: ISO, revoked_at: null, token: expect.stringMatching(/^hp_/),
    });
    const text = await runCli(['admin', 'token', 'create', '--contact', end.main_contact_id, '--read-only', '--expires', '2099-07-01T08:00:00+02:00'], env());
    expect(text.stdout).toMatch(/^Token \d+ for contact \d+ \(customer \d+\), scope: read-only, expires 2099-07-01T06:00:00\.000Z:\n\n {2}hp_[A-Za-z0-9]{40}\n\n/);

    // Its first request is noted as its last use.
    const api = await apiOn(db.store, 'http://cli.test');
    try {
      const r = await call(api.app, 'GET', '/dns-records?filter[domain]=end.example', { token: created.token, remoteAddress: '192.0.2.9' });
      expect(r.status).toBe(200);
    } finally {
      await api.close();
    }
    const [listed, readOnly] = await json(['admin', 'token', 'list', '--contact', end.main_contact_id]);
    const { token: _secret, ...shown } = created;
    expect(listed).toEqual({ ...shown, last_used_at: ISO });
    expect(readOnly).toMatchObject({ scope: 'read-only', read_only: true, domains: null, acme_challenge: false, allow_ips: null, last_used_at: null });
    const table = (await runCli(['admin', 'token', 'list', '--contact', end.main_contact_id], env())).stdout.split('\n');
    expect(table[0].split(/ {2,}/)).toEqual(['id', 'contact_id', 'customer_id', 'prefix', 'label', 'scope', 'expires_at', 'last_used_at', 'created_at', 'revoked_at']);
    expect(table[1]).toContain('acme-challenge; domains end.example,xn--bcher-kva.example; from 192.0.2.0/24,2001:db8::1/128  2099-01-30T23:00:00.000Z  20');
    expect(table[2]).toMatch(/ read-only +2099-07-01T06:00:00\.000Z +- +20/);
    // An unscoped token: "full", no expiry.
    const full = await json(['admin', 'token', 'create', '--contact', end.main_contact_id]);
    expect(full).toMatchObject({ scope: 'full', expires_at: null, read_only: false, domains: null, acme_challenge: false, allow_ips: null });
  });

  it('every bad option is refused with a message naming it, and no token is stored', async () => {
    const before = await tokenRows();
    const cases: [string[], string][] = [
      [['--domain', 'other.example'], '--domain other.example is not a domain of the contact\'s customer.'],
      [['--domain', 'nowhere.example'], '--domain nowhere.example is not a domain of the contact\'s customer.'],
      [['--domain', 'www.end.example'], '--domain www.end.example is not a domain of the contact\'s customer.'],
      [['--read-only', '--acme-challenge'], '--read-only and --acme-challenge together leave nothing to do: an ACME client must write its TXT records.'],
      [['--expires', '2001-01-01'], '--expires 2001-01-01 is not in the future.'],
      [['--expires', 'tomorrow'], '--expires "tomorrow" is not a date: write YYYY-MM-DD (00:00 Europe/Berlin of that day) or a timestamp with its offset, e.g. 2027-01-31T12:00:00Z.'],
      [['--allow-ip', '192.0.2.1/24'], '--allow-ip "192.0.2.1/24" is not an address or network: write e.g. 192.0.2.0/24, 2001:db8::/32 or 192.0.2.7 (host bits must be zero).'],
      [['--allow-ip', 'localhost'], '--allow-ip "localhost" is not an address or network: write e.g. 192.0.2.0/24, 2001:db8::/32 or 192.0.2.7 (host bits must be zero).'],
    ];
    for (const [options, message] of cases) {
      const r = await runCli(['admin', 'token', 'create', '--contact', end.main_contact_id, ...options], env());
      expect(r, options.join(' ')).toEqual({ code: 1, stdout: '', stderr: `hostplane: ${message}\n` });
    }
    expect(await tokenRows()).toEqual(before);
  });

  it("a reseller's token may be limited to an end customer's domain", async () => {
    const reseller = await json(['admin', 'customer', 'create', '--name', 'Rita Reseller', '--email', 'rita@reseller.example', '--reseller']);
    const endOfReseller = await json(['admin', 'customer', 'create', '--name', 'Emma', '--email', 'emma@emma.example', '--reseller-id', reseller.id]);
    await json(['admin', 'domain', 'create', '--name', 'emma.example', '--customer', endOfReseller.id, '--registered']);
    const t = await json(['admin', 'token', 'create', '--contact', reseller.main_contact_id, '--domain', 'emma.example']);
    expect(t).toMatchObject({ scope: 'domains emma.example', domains: ['emma.example'] });
  });
});
