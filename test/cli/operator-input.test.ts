// What the operator CLI refuses and how it says so: e-mail addresses that cannot
// receive mail, PHP versions the API does not know (API guide "Subdomains"), unknown reseller ids;
// with `--json`, failures as one JSON line on stderr; secrets from stdin (`--password-stdin`). Each
// refusal changes nothing, which the list commands and the HTTP API show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call } from '../helpers/app.js';
import { basic } from '../helpers/auth.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';

const BASE_URL = 'http://cli.test';
const ALLOWED_PHP = '5.6, 7.1, 7.2, 7.3, 7.4, 8.0, 8.1, 8.2, 8.3, 8.4, 8.5';

// One world per engine, built step by step and compared before and after each refusal: sequential.
describe.each(ENGINES)('operator CLI input on %s', { timeout: 60_000 }, (engine) => {
  let db: TestDb;
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof apiOn>>;
  let reseller: any;
  let customer: any;
  const run = (args: string[], stdin?: string) => runCli(args, env, { stdin });
  /** A command that must succeed with --json; its parsed output. */
  const json = async (args: string[], stdin?: string) => {
    const r = await run([...args, '--json'], stdin);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  /** The whole of a failed run: exit 1, nothing on stdout, `stderr` exactly. */
  const failed = (stderr: string) => ({ code: 1, stdout: '', stderr });
  const jsonFailed = (code: string, message: string) => failed(`${JSON.stringify({ error: { code, message } })}\n`);

  beforeAll(async () => {
    db = await newDatabase(engine);
    env = { DATABASE_URL: db.url, PUBLIC_BASE_URL: BASE_URL };
    await json(['migrate']);
    reseller = await json(['admin', 'customer', 'create', '--name', 'Rita Reseller', '--email', 'rita@reseller.example', '--reseller']);
    customer = await json(['admin', 'customer', 'create', '--name', 'Carl Customer', '--email', 'carl@customer.example']);
    api = await apiOn(db.store, BASE_URL);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  describe('e-mail addresses', () => {
    const bad = [
      'erika', 'erika@', '@example.com', 'erika@localhost', 'erika example@example.com', 'erika@exa mple.com',
      'erika@@example.com', 'erika@example..com', '.erika@example.com', 'erika.@example.com', 'erika@192.0.2.1',
      'erika@[192.0.2.1]', '"erika"@example.com', `${'e'.repeat(65)}@example.com`, 'erika@-example.com',
    ];

    it('customer create and contact create refuse an address that cannot receive mail, and create nothing', async () => {
      const before = await Promise.all([json(['admin', 'customer', 'list']), json(['admin', 'contact', 'list'])]);
      for (const email of bad) {
        const message = `"${email}" is not an e-mail address; write it as name@example.com.`;
        expect(await run(['admin', 'customer', 'create', '--name', 'Erika', '--email', email]), email).toEqual(failed(`hostplane: ${message}\n`));
        expect(await run(['admin', 'contact', 'create', '--customer', customer.id, '--name', 'Erika', '--email', email, '--json']), email)
          .toEqual(jsonFailed('invalid_api_data', message));
      }
      expect(await Promise.all([json(['admin', 'customer', 'list']), json(['admin', 'contact', 'list'])])).toEqual(before);
    });

    it('a contact needs a name', async () => {
      expect(await run(['admin', 'contact', 'create', '--customer', customer.id, '--name', ' ', '--email', 'x@customer.example']))
        .toEqual(failed('hostplane: A contact needs a name.\n'));
    });

    it('addresses with tags, apostrophes, IDN domains and non-ASCII local parts are kept as given, and the API shows them', async () => {
      const good = ["erika.m+hosting@example.com", "o'brien@example.co.uk", 'erika@bücher.example', 'jörg@xn--bcher-kva.example'];
      for (const email of good) {
        const c = await json(['admin', 'contact', 'create', '--customer', customer.id, '--name', 'Erika', '--email', email]);
        expect(c).toMatchObject({ customer_id: customer.id, email });
      }
      const main = await json(['admin', 'customer', 'create', '--name', 'Ida', '--email', good[2]]);
      const { token } = await json(['admin', 'token', 'create', '--contact', main.main_contact_id]);
      const r = await call(api.app, 'GET', `/customers/${main.id}`, { token });
      expect(r.status).toBe(200);
      expect(r.json.data.attributes.email).toBe(good[2]);
    });
  });

  describe('plans', () => {
    it('plan create offers the PHP versions the API knows, in the order given', async () => {
      const plan = await json(['admin', 'plan', 'create', '--name', 'Legacy and new', '--php-versions', '8.5,5.6,7.4']);
      expect(plan.php_versions).toEqual(['8.5', '5.6', '7.4']);
    });

    it('plan create refuses any other version, names the allowed ones and creates nothing', async () => {
      const before = await json(['admin', 'plan', 'list']);
      expect(await run(['admin', 'plan', 'create', '--name', 'X', '--php-versions', '8.3,9.0'])).toEqual(
        failed(`hostplane: Unknown PHP version 9.0; choose from ${ALLOWED_PHP}.\n`),
      );
      expect(await run(['admin', 'plan', 'create', '--name', 'X', '--php-versions', '7.0,8,php8.3', '--json'])).toEqual(
        jsonFailed('invalid_api_data', `Unknown PHP versions 7.0, 8, php8.3; choose from ${ALLOWED_PHP}.`),
      );
      expect(await json(['admin', 'plan', 'list'])).toEqual(before);
    });
  });

  describe('domain names', () => {
    const RULE =
      'A domain name is two or more labels separated by dots, e.g. example.com; a label is 1 to 63 letters, ' +
      'digits and hyphens (letters of any script, as in bücher.de), not starting or ending with a hyphen; ' +
      'the whole name has at most 253 characters.';

    it.each([
      ['bad_domain', 'it contains "_"'],
      ['localhost', 'it has one label only'],
      ['shop..example', 'it has an empty label (a dot at the start, or two in a row)'],
      ['-shop.example', 'the label "-shop" starts or ends with a hyphen'],
      [`${'a'.repeat(64)}.example`, `the label "${'a'.repeat(64).slice(0, 77)}" is longer than 63 characters`],
      ['192.0.2.1', 'its last label is a number, as in an IP address'],
      ['https://shop.example/', 'it contains ":"'],
    ])('domain create --name %s says why it is no domain name and what one is, and creates nothing', async (name, why) => {
      const before = await json(['admin', 'domain', 'list']);
      const shown = name.length > 80 ? `${name.slice(0, 77)}...` : name;
      const message = `"${shown}" is not a domain name: ${why}. ${RULE}`;
      expect(await run(['admin', 'domain', 'create', '--name', name, '--customer', customer.id, '--registered'])).toEqual(failed(`hostplane: ${message}\n`));
      expect(await run(['admin', 'domain', 'create', '--name', name, '--customer', customer.id, '--registered', '--json'])).toEqual(
        jsonFailed('invalid_api_data', message),
      );
      expect(await json(['admin', 'domain', 'list'])).toEqual(before);
    });

    it('an international name is a domain name', async () => {
      expect(await json(['admin', 'domain', 'create', '--name', 'Bücher-Carl.example', '--customer', customer.id, '--registered'])).toMatchObject({
        id: 'xn--bcher-carl-9db.example',
        name: 'bücher-carl.example',
      });
    });
  });

  describe('reseller ids', () => {
    it('an unknown reseller id says "No customer N"; a customer that is no reseller says that', async () => {
      const before = await Promise.all([json(['admin', 'customer', 'list']), json(['admin', 'plan', 'list'])]);
      const [customerUnknown, planUnknown, customerNotReseller, planNotReseller] = await Promise.all([
        run(['admin', 'customer', 'create', '--name', 'E', '--email', 'e@end.example', '--reseller-id', '99999']),
        run(['admin', 'plan', 'create', '--name', 'Sold', '--reseller-id', '99999', '--json']),
        run(['admin', 'customer', 'create', '--name', 'E', '--email', 'e@end.example', '--reseller-id', customer.id]),
        run(['admin', 'plan', 'create', '--name', 'Sold', '--reseller-id', customer.id, '--json']),
      ]);
      expect(customerUnknown).toEqual(failed('hostplane: No customer 99999.\n'));
      expect(planUnknown).toEqual(jsonFailed('resource_not_found', 'No customer 99999.'));
      expect(customerNotReseller).toEqual(failed(`hostplane: Customer ${customer.id} is not a reseller.\n`));
      expect(planNotReseller).toEqual(jsonFailed('invalid_api_data', `Customer ${customer.id} is not a reseller.`));
      expect(await Promise.all([json(['admin', 'customer', 'list']), json(['admin', 'plan', 'list'])])).toEqual(before);
    });
  });

  describe('--json failures', () => {
    it('every kind of failure is one JSON line {"error":{"code","message"}} on stderr, stdout stays empty, exit 1', async () => {
      const plan = await json(['admin', 'plan', 'create', '--name', 'Web']);
      await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'web', '--linux-user', 'web_carl']);
      const cases: [string[], string, string][] = [
        [['admin', 'token', 'revoke', '99999'], 'resource_not_found', 'No active token 99999.'],
        [['admin', 'contact', 'delete', customer.main_contact_id], 'invalid_state', 'The main contact of a customer cannot be deleted.'],
        [['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'again', '--linux-user', 'web_carl'], 'conflict', 'Linux user web_carl exists.'],
        [['admin', 'domain', 'create', '--name', 'nowhere.example', '--customer', customer.id], 'invalid_api_data', 'A domain is registered, assigned to a package (presence), or both.'],
        [['demo'], 'invalid_state', expect.stringMatching(/^the database .+ already has customers; `hostplane demo` loads the demo dataset only into a new database/) as any],
        // Usage errors, found before the command runs.
        [['admin', 'customer', 'create', '--name', 'A'], 'usage', "required option '--email <email>' not specified"],
        [['admin', 'token', 'revoke', 'abc'], 'usage', "command-argument value 'abc' is invalid for argument 'id'. must be a positive whole number."],
        [['admin', 'customer', 'list', '--bogus'], 'usage', "unknown option '--bogus'"],
      ];
      for (const [args, code, message] of cases) {
        const r = await run([...args, '--json']);
        expect({ code: r.code, stdout: r.stdout }, args.join(' ')).toEqual({ code: 1, stdout: '' });
        expect(r.stderr, args.join(' ')).toBe(`${JSON.stringify(JSON.parse(r.stderr))}\n`);
        expect(JSON.parse(r.stderr), args.join(' ')).toEqual({ error: { code, message } });
      }
    });

    it('invalid settings: the JSON lists every problem, exit 2', async () => {
      const r = await runCli(['admin', 'customer', 'list', '--json'], { ...env, PORT: 'abc', RATE_LIMIT_MAX: '0' });
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
      expect(JSON.parse(r.stderr)).toEqual({
        error: { code: 'invalid_settings', message: 'invalid settings', details: [expect.stringMatching(/^PORT: /), 'RATE_LIMIT_MAX: must be greater than 0'] },
      });
    });
  });

  describe('--password-stdin', () => {
    const domainCheck = (password: string) =>
      call(api.app, 'GET', '/domain-availability/free-name.example', { headers: { authorization: basic(reseller.id, password) } });

    it('set-legacy-password reads the password from stdin (its line break is not part of it); it works for Basic auth', async () => {
      expect(await json(['admin', 'reseller', 'set-legacy-password', '--customer', reseller.id, '--password-stdin'], 'a stdin secret, 23 chars\n'))
        .toEqual({ customer_id: reseller.id, generated: false, legacy_password: null });
      expect((await domainCheck('a stdin secret, 23 chars')).status).toBe(200);
      expect((await domainCheck('a stdin secret, 23 chars\n')).status).toBe(401);

      // Windows line ending, no output for people beyond the confirmation.
      const r = await run(['admin', 'reseller', 'set-legacy-password', '--customer', reseller.id, '--password-stdin'], 'crlf-ended-secret\r\n');
      expect(r).toEqual({ code: 0, stdout: `Set the legacy password of reseller ${reseller.id}.\n`, stderr: '' });
      expect((await domainCheck('crlf-ended-secret')).status).toBe(200);
      expect((await domainCheck('a stdin secret, 23 chars')).status).toBe(401);
    });

    it('an empty, multi-line, too long or too short secret is refused and the password stays', async () => {
      const cmd = ['admin', 'reseller', 'set-legacy-password', '--customer', reseller.id, '--password-stdin'];
      expect(await run(cmd, '')).toEqual(failed(`hostplane: --password-stdin: stdin is empty; pipe the secret in, e.g. printf '%s\\n' "$PASSWORD" | hostplane …\n`));
      expect(await run([...cmd, '--json'], '\n')).toEqual(
        jsonFailed('invalid_input', `--password-stdin: stdin is empty; pipe the secret in, e.g. printf '%s\\n' "$PASSWORD" | hostplane …`),
      );
      expect(await run(cmd, 'first-line-secret\nsecond-line\n')).toEqual(failed('hostplane: --password-stdin: stdin holds more than one line; give the secret alone, on one line.\n'));
      expect(await run(cmd, 'x'.repeat(5000))).toEqual(failed('hostplane: --password-stdin: stdin holds more than 4096 bytes; give the secret alone, on one line.\n'));
      expect(await run(cmd, 'short\n')).toEqual(failed('hostplane: A legacy password needs at least 12 characters.\n'));
      expect(await run([...cmd, '--password', 'another-long-secret', '--json'], 'crlf-ended-secret\n')).toEqual(
        jsonFailed('usage', "option '--password-stdin' cannot be used with option '--password <password>'"),
      );
      expect((await domainCheck('crlf-ended-secret')).status).toBe(200);
    });
  });
});
