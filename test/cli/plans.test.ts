// A plan's recipients per mailbox and hour through the operator CLI (API guide "Plans";
// docs/decisions/0020-outbound-limits.md): set at `plan create`, shown by `plan list`, `plan show`
// and GET /plans, changed by `plan set`; the mail directory rows the mail servers read follow in the
// same transaction — for a plan's change, a package's move to another plan and a new mailbox. Bad
// input is refused with a message that says what is wanted, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call } from '../helpers/app.js';
import { apiOn, newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { placeholderMailServer } from '../helpers/email.js';

const BASE_URL = 'http://cli.test';

describe.each(ENGINES)('plan recipients per hour through the CLI on %s', { timeout: 60_000 }, (engine) => {
  let db: TestDb;
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof apiOn>>;
  let small: any;
  let big: any;
  /** Two customers' packages: `a` on plan small, `b` on plan big; a token and a domain each. */
  const c: Record<'a' | 'b', { token: string; domain: string; packageId: string }> = {} as never;
  const run = (args: string[]) => runCli(args, env);
  const json = async (args: string[]) => {
    const r = await run([...args, '--json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  let n = 0;
  const mailbox = async (who: 'a' | 'b') => {
    const attributes = { address: `box${++n}@${c[who].domain}`, address_type: 'mailbox' };
    const r = await call(api.app, 'POST', '/email-addresses', { token: c[who].token, body: { data: { type: 'email-address', attributes } } });
    expect(r.status, r.body).toBe(202);
    return r.json.data.attributes.address_ace as string;
  };
  /** recipients_per_hour of every mailbox in the mail directory, by address. */
  const directory = async () =>
    Object.fromEntries((await db.store.db.selectFrom('mail_users').select(['address', 'recipients_per_hour']).orderBy('address').execute()).map((r) => [r.address, r.recipients_per_hour]));
  const apiPlan = async (id: string, who: 'a' | 'b') => (await call(api.app, 'GET', `/plans/${id}`, { token: c[who].token })).json.data.attributes.recipients_per_hour;

  beforeAll(async () => {
    db = await newDatabase(engine);
    env = { DATABASE_URL: db.url, PUBLIC_BASE_URL: BASE_URL };
    await json(['migrate']);
    small = await json(['admin', 'plan', 'create', '--name', 'Small', '--recipients-per-hour', '200']);
    big = await json(['admin', 'plan', 'create', '--name', 'Big']);
    for (const [who, plan] of [['a', small], ['b', big]] as const) {
      const customer = await json(['admin', 'customer', 'create', '--name', `Customer ${who}`, '--email', `${who}@customer.example`]);
      const pkg = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', `pkg ${who}`]);
      await json(['admin', 'domain', 'create', '--name', `${who}-shop.example`, '--customer', customer.id, '--package', pkg.id]);
      const { token } = await json(['admin', 'token', 'create', '--contact', customer.main_contact_id]);
      c[who] = { token, domain: `${who}-shop.example`, packageId: pkg.id };
    }
    api = await apiOn(db.store, BASE_URL);
    await placeholderMailServer(db.store);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('plan create takes --recipients-per-hour (default 500); list, show and GET /plans show it', async () => {
    expect(small.recipients_per_hour).toBe(200);
    expect(big.recipients_per_hour).toBe(500);
    const list = await run(['admin', 'plan', 'list']);
    expect(list.stdout.split('\n')[0]).toMatch(/ recipients_per_hour  ssh_keys_per_package$/);
    expect(list.stdout.split('\n')[1]).toMatch(new RegExp(`^${small.id} +Small .* 200 +10$`));
    expect(await json(['admin', 'plan', 'show', small.id])).toEqual(small);
    const shown = await run(['admin', 'plan', 'show', small.id]);
    expect(shown).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `Plan ${small.id} (Small)`,
        '  max_databases         5',
        '  max_email_addresses   50',
        '  mailbox_quota_mb      2048',
        '  max_subdomains        20',
        '  database_versions     mariadb-10.11',
        '  php_versions          8.3,8.4,8.5',
        '  webspace_mb           10240',
        '  recipients_per_hour   200',
        '  ssh_keys_per_package  10',
        '  dmarc_policy          quarantine',
        '  reseller_id           -',
        `  created_at            ${small.created_at}`,
        '',
      ].join('\n'),
    });
    expect(await apiPlan(small.id, 'a')).toBe(200);
  });

  it('a new mailbox gets its plan\'s number in the mail directory', async () => {
    const a = await mailbox('a');
    const b = await mailbox('b');
    expect(await directory()).toMatchObject({ [a]: 200, [b]: 500 });
  });

  it('plan set changes the plan and, at once, the directory rows of its mailboxes only', async () => {
    const before = await directory();
    const r = await run(['admin', 'plan', 'set', small.id, '--recipients-per-hour', '50']);
    expect(r).toEqual({ code: 0, stderr: '', stdout: `Plan ${small.id} (Small): 50 recipients per mailbox and hour (was 200); 1 mailbox follows from its next message on.\n` });
    const after = await directory();
    for (const [address, value] of Object.entries(before)) expect(after[address], address).toBe(address.endsWith('@a-shop.example') ? 50 : value);
    expect(await apiPlan(small.id, 'a')).toBe(50);
    expect(await json(['admin', 'plan', 'set', big.id, '--recipients-per-hour', '1000000'])).toEqual({ ...big, recipients_per_hour: 1000000 });
    expect(Object.values(await directory())).toEqual(expect.arrayContaining([50, 1000000]));
    // And a mailbox made afterwards.
    const made = await mailbox('a');
    expect((await directory())[made]).toBe(50);
    const two = await run(['admin', 'plan', 'set', small.id, '--recipients-per-hour', '60']);
    expect(two.stdout).toBe(`Plan ${small.id} (Small): 60 recipients per mailbox and hour (was 50); 2 mailboxes follow from their next message on.\n`);
  });

  it('a plan without mailboxes says so', async () => {
    const empty = await json(['admin', 'plan', 'create', '--name', 'Empty']);
    expect(await run(['admin', 'plan', 'set', empty.id, '--recipients-per-hour', '7'])).toEqual({
      code: 0, stderr: '', stdout: `Plan ${empty.id} (Empty): 7 recipients per mailbox and hour (was 500); no mailbox has it yet.\n`,
    });
  });

  it("package set-plan gives the package's mailboxes the new plan's number, and back", async () => {
    await json(['admin', 'package', 'set-plan', '--package', c.a.packageId, '--plan', big.id]);
    const moved = await directory();
    for (const [address, value] of Object.entries(moved)) expect(value, address).toBe(1000000);
    await json(['admin', 'package', 'set-plan', '--package', c.a.packageId, '--plan', small.id]);
    for (const [address, value] of Object.entries(await directory())) expect(value, address).toBe(address.endsWith('@a-shop.example') ? 60 : 1000000);
  });

  it('bad input is refused saying what is wanted, and nothing changes', async () => {
    const before = { plans: await json(['admin', 'plan', 'list']), directory: await directory() };
    const wanted = "option '--recipients-per-hour <n>' argument '%s' is invalid. must be a whole number from 1 to 1000000.";
    for (const value of ['0', '-1', 'abc', '1.5', '1000001', '', ' 5', '0x10']) {
      expect(await run(['admin', 'plan', 'set', small.id, '--recipients-per-hour', value]), value).toEqual({ code: 1, stdout: '', stderr: `error: ${wanted.replace('%s', value)}\n` });
      expect(await run(['admin', 'plan', 'set', small.id, '--recipients-per-hour', value, '--json']), value).toEqual({
        code: 1, stdout: '', stderr: `${JSON.stringify({ error: { code: 'usage', message: wanted.replace('%s', value) } })}\n`,
      });
      expect(await run(['admin', 'plan', 'create', '--name', 'Never', '--recipients-per-hour', value]), value).toMatchObject({ code: 1, stdout: '' });
    }
    expect(await run(['admin', 'plan', 'set', small.id])).toEqual({ code: 1, stdout: '', stderr: 'hostplane: Give --recipients-per-hour <n> or --ssh-keys-per-package <n> (or both).\n' });
    expect(await run(['admin', 'plan', 'set', '99999', '--recipients-per-hour', '5'])).toEqual({ code: 1, stdout: '', stderr: 'hostplane: No plan 99999.\n' });
    expect(await run(['admin', 'plan', 'set', 'small', '--recipients-per-hour', '5'])).toEqual({
      code: 1, stdout: '', stderr: "error: command-argument value 'small' is invalid for argument 'id'. must be a positive whole number.\n",
    });
    expect(await run(['admin', 'plan', 'show', '99999', '--json'])).toEqual({ code: 1, stdout: '', stderr: '{"error":{"code":"resource_not_found","message":"No plan 99999."}}\n' });
    expect({ plans: await json(['admin', 'plan', 'list']), directory: await directory() }).toEqual(before);
  });

  it('plan create and plan set take --ssh-keys-per-package (default 10, 0 to 1000); show and GET /plans show it (API guide "SSH keys")', async () => {
    expect(small.ssh_keys_per_package).toBe(10);
    const few = await json(['admin', 'plan', 'create', '--name', 'Few keys', '--ssh-keys-per-package', '2']);
    expect(few.ssh_keys_per_package).toBe(2);
    expect(await run(['admin', 'plan', 'set', few.id, '--ssh-keys-per-package', '0'])).toEqual({ code: 0, stderr: '', stdout: `Plan ${few.id} (Few keys): 0 SSH keys per package (was 2).\n` });
    expect(await run(['admin', 'plan', 'set', few.id, '--ssh-keys-per-package', '1', '--recipients-per-hour', '9'])).toEqual({
      code: 0, stderr: '',
      stdout: `Plan ${few.id} (Few keys): 9 recipients per mailbox and hour (was 500); no mailbox has it yet.\nPlan ${few.id} (Few keys): 1 SSH key per package (was 0).\n`,
    });
    expect(await json(['admin', 'plan', 'show', few.id])).toMatchObject({ ssh_keys_per_package: 1, recipients_per_hour: 9 });
    expect((await call(api.app, 'GET', `/plans/${small.id}`, { token: c.a.token })).json.data.attributes.ssh_keys_per_package).toBe(10);
    const wanted = "option '--ssh-keys-per-package <n>' argument '%s' is invalid. must be a whole number from 0 to 1000.";
    for (const value of ['-1', 'abc', '1.5', '1001', '']) {
      expect(await run(['admin', 'plan', 'set', few.id, '--ssh-keys-per-package', value]), value).toEqual({ code: 1, stdout: '', stderr: `error: ${wanted.replace('%s', value)}\n` });
    }
    expect((await json(['admin', 'plan', 'show', few.id])).ssh_keys_per_package).toBe(1);
  });
});
