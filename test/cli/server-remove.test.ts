// `hostplane admin web-server remove` and `admin mail-server remove`, run in-process on each engine:
// a server no package lives on is forgotten (and can be registered again under its name); one a
// package lives on is refused with a message naming the packages, as is the default while there
// are others, and an unknown name. Mail servers are stored through the repository: `mail-server
// add` first asks the server's doveadm, which test/cli/mail-servers.test.ts does with a real one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailServersRepository } from '../../src/provisioning/mail/servers.repository.js';
import { ENGINES } from '../helpers/app.js';
import { newDatabase, runCli, type TestDb } from '../helpers/cli.js';

describe.each(ENGINES)('web-server remove and mail-server remove on %s', (engine) => {
  let db: TestDb;
  let customer: { id: string };
  let plan: { id: string };
  const env = () => ({ DATABASE_URL: db.url });
  const json = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env());
    expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  /** A refusal: exit 1 with `message` as one line, and as one JSON object with --json. */
  const refused = async (args: string[], code: string, message: string) => {
    expect(await runCli(args, env()), args.join(' ')).toEqual({ code: 1, stdout: '', stderr: `hostplane: ${message}\n` });
    const j = await runCli([...args, '--json'], env());
    expect({ code: j.code, stdout: j.stdout, error: JSON.parse(j.stderr) }).toEqual({ code: 1, stdout: '', error: { error: { code, message } } });
  };
  const addWeb = (name: string) =>
    json(['admin', 'web-server', 'add', '--name', name, '--caddy-admin', 'http://127.0.0.1:2019', '--http-listen', '0.0.0.0:80', '--address', '192.0.2.10', '--home-root', `/srv/${name}`]);
  const addMail = async (name: string) => {
    const repo = new MailServersRepository(db.store.db);
    await repo.add({ name, doveadm_url: 'http://127.0.0.1:8080', doveadm_key: 'k', smtp: '127.0.0.1:25', imap: '127.0.0.1:143', is_default: 0, created_at: new Date().toISOString() });
    if (!(await repo.defaultServer())) await repo.setDefault(name);
  };
  const names = async (kind: 'web-server' | 'mail-server') => (await json(['admin', kind, 'list'])).map((s: { name: string; default: boolean }) => [s.name, s.default]);
  const packageOn = (option: '--web-server' | '--mail-server', server: string, name: string) =>
    json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', name, option, server]);

  beforeAll(async () => {
    db = await newDatabase(engine);
    expect((await runCli(['migrate'], env())).code).toBe(0);
    customer = await json(['admin', 'customer', 'create', '--name', 'Server Kunde', '--email', 'server@kunde.example']);
    plan = await json(['admin', 'plan', 'create', '--name', 'Servers']);
  });
  afterAll(() => db?.drop());

  it.each([
    ['web-server', '--web-server', 'sites and files are there'],
    ['mail-server', '--mail-server', 'e-mail addresses and mailboxes are there'],
  ] as const)('%s remove: refused while packages live there or for the default among others; then removed', async (kind, option, what) => {
    const noun = kind === 'web-server' ? 'web server' : 'mail server';
    const add = kind === 'web-server' ? addWeb : addMail;
    await add('busy');
    await add('spare');
    const one = await packageOn(option, 'busy', `${kind}-1`);
    await refused(['admin', kind, 'remove', 'busy'], 'invalid_state',
      `Package ${one.id} lives on ${noun} "busy" (${what}); a ${noun} is removed only while no package lives on it.`);
    const two = await packageOn(option, 'busy', `${kind}-2`);
    await refused(['admin', kind, 'remove', 'busy'], 'invalid_state',
      `Packages ${one.id}, ${two.id} live on ${noun} "busy" (${what}); a ${noun} is removed only while no package lives on it.`);
    await refused(['admin', kind, 'remove', 'nope'], 'resource_not_found', `No ${noun} is named "nope".`);
    expect(await names(kind)).toEqual([['busy', true], ['spare', false]]);

    // The default goes last: another one takes its place first.
    await json(['admin', kind, 'set-default', 'spare']);
    await add('other');
    await refused(['admin', kind, 'remove', 'spare'], 'invalid_state', `"spare" is the default ${noun}; make another the default first (busy, other).`);
    expect(await runCli(['admin', kind, 'remove', 'other'], env())).toEqual({
      code: 0,
      stdout: `Removed ${noun} other; nothing on the server itself was changed.\n`,
      stderr: '',
    });
    await json(['admin', kind, 'set-default', 'busy']);
    expect(await json(['admin', kind, 'remove', 'spare'])).toEqual({ name: 'spare', removed: true });
    expect(await names(kind)).toEqual([['busy', true]]);
    // The name is free again: a stack brought up elsewhere registers under it.
    await add('spare');
    expect(await names(kind)).toEqual([['busy', true], ['spare', false]]);
  });

  it('the only server, the default, goes once no package lives on it (a local stack brought down)', async () => {
    const own = await newDatabase(engine);
    try {
      const e = { DATABASE_URL: own.url };
      expect((await runCli(['migrate'], e)).code).toBe(0);
      expect((await runCli(['admin', 'web-server', 'add', '--name', 'local', '--caddy-admin', 'http://127.0.0.1:18000', '--http-listen', '127.0.0.1:18001',
        '--address', '127.0.0.1', '--home-root', '/tmp/hp-stack/www'], e)).code).toBe(0);
      await new MailServersRepository(own.store.db).add({
        name: 'local', doveadm_url: 'http://127.0.0.1:18013', doveadm_key: 'k', smtp: '127.0.0.1:18010', imap: '127.0.0.1:18011', is_default: 1, created_at: new Date().toISOString(),
      });
      for (const kind of ['web-server', 'mail-server']) {
        expect(await runCli(['admin', kind, 'remove', 'local'], e)).toEqual({
          code: 0, stdout: `Removed ${kind.replace('-', ' ')} local; nothing on the server itself was changed.\n`, stderr: '',
        });
        expect(await runCli(['admin', kind, 'list', '--json'], e)).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
      }
    } finally {
      await own.drop();
    }
  });
});
