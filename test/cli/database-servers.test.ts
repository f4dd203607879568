// `hostplane admin database-server add|list|set-default|remove` (API guide "Databases"), run
// in-process against the real MariaDB at TEST_MARIADB_URL on each engine. The suite registers the
// server as an admin account of its own with a password, and checks after EVERY command that the
// password appears in neither stdout nor stderr. MySQL cannot be installed here: tests that label
// the MariaDB as `mysql` (test-only override) say "mysql label on MariaDB" in their names.
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { freePort, newDatabase, runCli, type CliRun, type TestDb } from '../helpers/cli.js';
import { requirable } from '../helpers/required.js';
import { privateMariadbMissing, startPrivateMariadb, type PrivateMariadb } from '../helpers/mariadb.js';

const MARIADB_URL = process.env.TEST_MARIADB_URL;
const suite = requirable(MARIADB_URL ? null : 'TEST_MARIADB_URL is not set (a MariaDB server, e.g. mysql://root@127.0.0.1:3306/test)');

suite('hostplane admin database-server', () => {
  const tag = crypto.randomBytes(4).toString('hex');
  // Letters and digits only: a URL-encoded form of the password would look different from it.
  const admin = { user: `hp_srv_${tag}`, password: `Adm1nSecret${crypto.randomBytes(8).toString('hex')}` };
  const reader = { user: `hp_ro_${tag}`, password: `Re4derSecret${crypto.randomBytes(8).toString('hex')}` };
  const target = new URL(MARIADB_URL ?? 'mysql://root@127.0.0.1:3306');
  const host = target.hostname;
  const port = Number(target.port || 3306);
  const where = `${host}:${port}`;
  const urlOf = (u: { user: string; password?: string }) => `mysql://${u.user}${u.password ? `:${u.password}` : ''}@${where}`;
  let root: mysql.Connection;
  let versionString: string;
  let version: string;

  beforeAll(async () => {
    root = await mysql.createConnection({ host, port, user: decodeURIComponent(target.username), password: decodeURIComponent(target.password) });
    const [rows] = await root.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    versionString = rows[0].v;
    version = /^(\d+\.\d+)/.exec(versionString)![1];
    expect(versionString).toMatch(/MariaDB/);
    // The account an operator would register: may create databases and users.
    await root.query('CREATE USER ?@? IDENTIFIED BY ?', [admin.user, '%', admin.password]);
    await root.query('GRANT ALL PRIVILEGES ON *.* TO ?@? WITH GRANT OPTION', [admin.user, '%']);
    // One that may log in but not read mysql.user.
    await root.query('CREATE USER ?@? IDENTIFIED BY ?', [reader.user, '%', reader.password]);
  });
  afterAll(async () => {
    await root?.query('DROP USER IF EXISTS ?@?, ?@?', [admin.user, '%', reader.user, '%']);
    await root?.end();
  });

  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    let db: TestDb;
    let env: Record<string, string>;
    /** `hostplane <args>`; whatever it did, the admin passwords are nowhere in its output. */
    const run = async (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliRun> => {
      const r = await runCli(args, { ...env, ...opts.env }, { stdin: opts.stdin });
      for (const secret of [admin.password, reader.password]) {
        expect(r.stdout, args.join(' ')).not.toContain(secret);
        expect(r.stderr, args.join(' ')).not.toContain(secret);
      }
      return r;
    };
    /** A command that must succeed with --json and print nothing on stderr; its parsed output. */
    const json = async (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) => {
      const r = await run([...args, '--json'], opts);
      expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
      return JSON.parse(r.stdout);
    };
    const list = () => json(['admin', 'database-server', 'list']);
    /** The whole of a failed --json run: exit 1, nothing on stdout, one JSON error on stderr. */
    const jsonFailed = (code: string, message: string) => ({ code: 1, stdout: '', stderr: `${JSON.stringify({ error: { code, message } })}\n` });
    const add = (name: string, ...more: string[]) =>
      ['admin', 'database-server', 'add', '--name', name, '--db-type', 'mariadb', '--db-version', version, '--url', urlOf(admin), ...more];
    /** A server as list and --json show it. */
    const shown = (name: string, over: Record<string, unknown> = {}) => ({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      name,
      db_type: 'mariadb',
      version,
      host: where,
      admin_user: admin.user,
      access_hosts: ['%'],
      default: false,
      dedicated: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      ...over,
    });

    beforeAll(async () => {
      db = await newDatabase(engine);
      env = { DATABASE_URL: db.url };
      await json(['migrate']);
    });
    afterAll(() => db?.drop());

    it('add: the first server of a type and version becomes its default; list shows host and admin user only', async () => {
      expect(await list()).toEqual([]);
      const r = await run(add('db-a'));
      expect(r).toEqual({ code: 0, stdout: `Registered database server db-a (mariadb ${version} at ${where}, the default for mariadb ${version}).\n`, stderr: '' });
      expect(await list()).toEqual([shown('db-a', { default: true })]);
      const table = await run(['admin', 'database-server', 'list']);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0].split(/\s+/)).toEqual(['name', 'db_type', 'version', 'host', 'admin_user', 'access_hosts', 'default', 'dedicated']);
      expect(table.stdout.split('\n')[1].split(/\s+/)).toEqual(['db-a', 'mariadb', version, where, admin.user, '%', 'true', 'false']);
    });

    it('add --password-stdin takes the password from stdin; a second server of the pair is not the default', async () => {
      const b = await json([...add('db-b', '--access-host', 'localhost', '--access-host', '10.0.0.%'), '--url', urlOf({ user: admin.user }), '--password-stdin'], {
        stdin: `${admin.password}\n`,
      });
      expect(b).toEqual(shown('db-b', { access_hosts: ['localhost', '10.0.0.%'] }));
      expect(await list()).toEqual([shown('db-a', { default: true }), b]);
    });

    it('a password both in the URL and on stdin is refused', async () => {
      expect(await run([...add('db-x', '--password-stdin'), '--json'], { stdin: `${admin.password}\n` }))
        .toEqual(jsonFailed('invalid_api_data', 'Give the admin password either in the URL or on stdin, not both.'));
    });

    it('set-default switches the default: exactly one per type and version', async () => {
      const r = await run(['admin', 'database-server', 'set-default', 'db-b']);
      expect(r).toEqual({ code: 0, stdout: `db-b is now the default for mariadb ${version}.\n`, stderr: '' });
      const servers = await list();
      expect(servers.map((s: any) => [s.name, s.default])).toEqual([['db-a', false], ['db-b', true]]);
      expect(await json(['admin', 'database-server', 'set-default', 'db-a'])).toEqual(shown('db-a', { default: true, id: servers[0].id }));
      expect((await list()).map((s: any) => [s.name, s.default])).toEqual([['db-a', true], ['db-b', false]]);
      expect(await run(['admin', 'database-server', 'set-default', 'db-zz', '--json']))
        .toEqual(jsonFailed('resource_not_found', 'No database server is named "db-zz".'));
    });

    it('add --default takes the default over from the current one', async () => {
      expect(await json(add('db-c', '--default'))).toEqual(shown('db-c', { default: true }));
      expect((await list()).filter((s: any) => s.default).map((s: any) => s.name)).toEqual(['db-c']);
    });

    it('a server whose flavour or version differs from --db-type/--db-version is refused, and nothing is stored', async () => {
      const before = await list();
      const mysqlLabel = add('db-m').map((a) => (a === 'mariadb' ? 'mysql' : a));
      expect(await run(mysqlLabel)).toEqual({
        code: 1,
        stdout: '',
        stderr: `hostplane: ${where} is mariadb ${version} (${versionString}), not mysql ${version}; register it with --db-type mariadb --db-version ${version}.\n`,
      });
      const oldVersion = add('db-m').map((a) => (a === version ? '5.5' : a));
      expect(await run([...oldVersion, '--json'])).toEqual(jsonFailed(
        'invalid_api_data',
        `${where} is mariadb ${version} (${versionString}), not mariadb 5.5; register it with --db-type mariadb --db-version ${version}.`,
      ));
      expect(await list()).toEqual(before);
    });

    it('mysql label on MariaDB: with the test-only override the server is registered as mysql, with a warning', async () => {
      const args = ['admin', 'database-server', 'add', '--name', 'my-80', '--db-type', 'mysql', '--db-version', '8.0', '--url', urlOf(admin), '--json'];
      const r = await run(args, { env: { HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH: '1' } });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(shown('my-80', { db_type: 'mysql', version: '8.0', default: true }));
      expect(r.stderr).toBe(
        `hostplane: warning: ${where} is mariadb ${version} (${versionString}), not mysql 8.0; ` +
          'registered as mysql 8.0 anyway (HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH, for tests only).\n',
      );
      // The other pair's default is untouched.
      expect((await list()).filter((s: any) => s.default).map((s: any) => s.name)).toEqual(['db-c', 'my-80']);
    });

    it('mysql label on MariaDB: --dedicated is never the default, even as the first server of its pair', async () => {
      const override = { env: { HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH: '1' } };
      const addMysql57 = (name: string, ...more: string[]) =>
        ['admin', 'database-server', 'add', '--name', name, '--db-type', 'mysql', '--db-version', '5.7', '--url', urlOf(admin), ...more, '--json'];
      expect(await run(addMysql57('my-57-x', '--dedicated', '--default'), override))
        .toEqual(jsonFailed('invalid_api_data', 'A dedicated server is never the default: give --default or --dedicated, not both.'));
      const r = await run(addMysql57('my-57', '--dedicated'), override);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(shown('my-57', { db_type: 'mysql', version: '5.7', dedicated: true, default: false }));
      expect(await run(['admin', 'database-server', 'set-default', 'my-57', '--json']))
        .toEqual(jsonFailed('invalid_state', 'my-57 is a dedicated server: it is never the default.'));
      expect((await list()).find((s: any) => s.name === 'my-57')).toMatchObject({ default: false, dedicated: true });
    });

    it('an unreachable server or a wrong password is a clear error without the password, and nothing is stored', async () => {
      const before = await list();
      const closed = await freePort();
      const unreachable = add('db-u').map((a) => (a === urlOf(admin) ? `mysql://${admin.user}:${admin.password}@127.0.0.1:${closed}` : a));
      expect(await run([...unreachable, '--json'])).toEqual(jsonFailed(
        'service_unavailable',
        `Cannot connect to the database server at 127.0.0.1:${closed} as ${admin.user}: connect ECONNREFUSED 127.0.0.1:${closed}.`,
      ));
      const wrong = add('db-u').map((a) => (a === urlOf(admin) ? urlOf({ user: admin.user, password: `${admin.password}x` }) : a));
      const r = await run(wrong);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(new RegExp(`^hostplane: Cannot connect to the database server at ${where} as ${admin.user}: Access denied for user '${admin.user}'@'[^']+' \\(using password: YES\\)\\.\\n$`));
      expect(await list()).toEqual(before);
    });

    it('bad names, versions, URLs and duplicates are refused without echoing the URL', async () => {
      const cases: [string[], string, string][] = [
        [add('DB_1'), 'invalid_api_data', '"DB_1" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. db22.'],
        [add('db-v').map((a) => (a === version ? '10' : a)), 'invalid_api_data', '"10" is not a version: give major.minor, e.g. 10.11.'],
        [add('db-h', '--access-host', 'a b'), 'invalid_api_data', '"a b" is not an access host: give a host name, an address or a pattern such as % or 10.0.0.%.'],
        [[...add('db-p'), '--url', `postgres://${admin.user}:${admin.password}@${where}`], 'invalid_api_data', 'The server URL must start with mysql://, e.g. mysql://admin@host:3306.'],
        [[...add('db-p'), '--url', `${urlOf(admin)}/test`], 'invalid_api_data', 'The server URL names a server, not a database: give only mysql://admin@host:port.'],
        [[...add('db-p'), '--url', `mysql://${admin.password}`], 'invalid_api_data', 'The server URL must name the admin user: mysql://admin@host:port.'],
        [add('db-a'), 'conflict', 'A database server named "db-a" exists already.'],
      ];
      const before = await list();
      for (const [args, code, message] of cases) expect(await run([...args, '--json']), args.join(' ')).toEqual(jsonFailed(code, message));
      expect(await list()).toEqual(before);
    });

    it('an admin user that may not read mysql.user is registered, with a warning that anonymous accounts were not checked', async () => {
      const r = await run([...add('db-r'), '--url', urlOf(reader)]);
      expect(r).toEqual({
        code: 0,
        stdout: `Registered database server db-r (mariadb ${version} at ${where}, not the default).\n`,
        stderr: `hostplane: warning: Could not check ${where} for anonymous accounts: ${reader.user} may not read mysql.user.\n`,
      });
    });

    it('remove: refused while a database lives on the server, done once it is gone; the default goes last', async () => {
      const customer = await json(['admin', 'customer', 'create', '--name', 'Dora Database', '--email', 'dora@customer.example']);
      const plan = await json(['admin', 'plan', 'create', '--name', 'With databases']);
      const pkg = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'Web']);
      const { id } = await db.store.db
        .insertInto('databases')
        .values({
          customer_id: Number(customer.id), package_id: Number(pkg.id), server_name: 'db-b', db_type: 'mariadb', version,
          name: `${pkg.linux_user}_1`, state: 'live', created_at: new Date().toISOString(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const before = await list();
      expect(await run(['admin', 'database-server', 'remove', 'db-b', '--json'])).toEqual(jsonFailed('invalid_state', '1 database lives on db-b; delete it first.'));
      expect(await run(['admin', 'database-server', 'remove', 'db-c']))
        .toEqual({ code: 1, stdout: '', stderr: 'hostplane: db-c is the default for mariadb 10.11; make another server the default first (db-a, db-b, db-r).\n'.replaceAll('10.11', version) });
      expect(await list()).toEqual(before);

      await db.store.db.deleteFrom('databases').where('id', '=', id).execute();
      expect(await json(['admin', 'database-server', 'remove', 'db-b'])).toEqual({ name: 'db-b', removed: true });
      expect(await run(['admin', 'database-server', 'remove', 'db-a']))
        .toEqual({ code: 0, stdout: 'Removed database server db-a; nothing on the server itself was changed.\n', stderr: '' });
      expect(await run(['admin', 'database-server', 'remove', 'db-a', '--json'])).toEqual(jsonFailed('resource_not_found', 'No database server is named "db-a".'));
      await json(['admin', 'database-server', 'remove', 'db-r']);
      // The last server of its pair: the default may go, and the pair has no server left.
      await json(['admin', 'database-server', 'remove', 'db-c']);
      expect((await list()).map((s: any) => s.name)).toEqual(['my-57', 'my-80']);
    });
  });
});

// An anonymous ''@'localhost' takes precedence over a customer's user@'%' for clients on that
// host (docs/operator-guide.md "Database servers"): `add` warns. The account is made on a private
// mariadbd, never on the shared server, so no other suite's logins are affected. One engine:
// nothing is stored differently per engine here.
requirable(privateMariadbMissing())('hostplane admin database-server add on a server with anonymous accounts', () => {
  let server: PrivateMariadb;
  let db: TestDb;
  beforeAll(async () => {
    server = await startPrivateMariadb();
    const conn = await mysql.createConnection(server.url);
    await conn.query("CREATE USER IF NOT EXISTS ''@'localhost'");
    await conn.end();
    db = await newDatabase('sqlite');
    await runCli(['migrate'], { DATABASE_URL: db.url });
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
    await server?.stop();
  });

  it("warns about ''@'localhost' on stderr and still registers the server", async () => {
    const conn = await mysql.createConnection(server.url);
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    await conn.end();
    const version = /^(\d+\.\d+)/.exec(rows[0].v)![1];
    const port = new URL(server.url).port;
    const r = await runCli(['admin', 'database-server', 'add', '--name', 'anon', '--db-type', 'mariadb', '--db-version', version, '--url', server.url, '--json'], {
      DATABASE_URL: db.url,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'anon', default: true });
    expect(r.stderr).toContain(`127.0.0.1:${port} has anonymous accounts (''@'localhost')`);
    expect(r.stderr).toContain("Remove them (DROP USER ''@'localhost';) unless you need them.");
  });
});
