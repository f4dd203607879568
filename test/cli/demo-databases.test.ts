// The demo with a real MariaDB: DEMO_MARIADB_URL makes the demo dataset register
// that server as `demo-db`, the default of the type and version it reports, and its plans offer
// them. What `hostplane demo` prints is then run as printed against `hostplane serve`: its curl
// creates a database, and the `mariadb` client logs in with the name and password of the answer.
// The demo's database names (demo_solo_1, …) are fixed, so both engines run one after the other
// and clear them on the test server before and after.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { ENGINES } from '../helpers/app.js';
import { exited, freePort, newDatabase, runCli, spawnCli, type CliRun, type TestDb } from '../helpers/cli.js';
import { mariadbClient, requireMariadb, testServer, withAdmin } from '../helpers/mariadb.js';
import { pollUntil, waitFor } from '../helpers/wait.js';

/** The test server's root URL without the database path, as an operator writes it. */
const serverUrl = () => {
  const u = new URL(testServer().url);
  u.pathname = '';
  return u.toString().replace(/\/$/, '');
};

/** Drops what the demo's packages created on the test server. */
const clearDemoDatabases = () =>
  withAdmin(testServer(), async (conn) => {
    const pattern = '^demo_(reseller|shop|blog|solo)_[0-9]+$';
    const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT User, Host FROM mysql.user WHERE User REGEXP ?', [pattern]);
    for (const u of users) await conn.query('DROP USER IF EXISTS ?@?', [u.User, u.Host]);
    const [dbs] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME REGEXP ?', [pattern]);
    for (const d of dbs) await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(String(d.n))}`);
  });

requireMariadb()('demo with DEMO_MARIADB_URL', () => {
  describe.each(ENGINES)('on %s', { timeout: 120_000 }, (engine) => {
    let db: TestDb;
    let base: string;
    let demo: CliRun;
    let serve: ReturnType<typeof spawnCli> | undefined;
    let serveExit: Promise<CliRun> | undefined;

    beforeAll(async () => {
      await clearDemoDatabases();
      db = await newDatabase(engine);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      demo = await runCli(['demo'], { DATABASE_URL: db.url, PUBLIC_BASE_URL: base, DEMO_MARIADB_URL: serverUrl(), LOG_LEVEL: 'silent' });
      serve = spawnCli(['serve'], { DATABASE_URL: db.url, PUBLIC_BASE_URL: base, HOST: '127.0.0.1', PORT: String(port), DNS_LISTEN: 'off', LOG_LEVEL: 'warn' });
      serveExit = exited(serve);
      let early: CliRun | null = null;
      void serveExit.then((r) => (early = r));
      await waitFor('serve to answer', async () => {
        if (early) throw new Error(`serve exited: ${early.stderr}`);
        return fetch(`${base}/healthz`).then((r) => r.ok, () => false);
      }, 60_000);
    }, 120_000);
    afterAll(async () => {
      serve?.kill('SIGTERM');
      await serveExit;
      await db?.drop();
      await clearDemoDatabases();
    });

    it('registers the server as the default of what it reports; the plans offer it', async () => {
      expect({ code: demo.code, stderr: demo.stderr }).toEqual({ code: 0, stderr: '' });
      const list = await runCli(['admin', 'database-server', 'list', '--json'], { DATABASE_URL: db.url });
      const [version] = await withAdmin(testServer(), async (c) => (await c.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v'))[0].map((r) => /^\d+\.\d+/.exec(r.v)![0]));
      const host = new URL(serverUrl()).host;
      expect(JSON.parse(list.stdout)).toEqual([
        { id: expect.any(String), name: 'demo-db', db_type: 'mariadb', version, host, admin_user: 'root', access_hosts: ['%'], default: true, dedicated: false, created_at: expect.any(String) },
      ]);
      const plans = await db.store.db.selectFrom('plans').select('database_versions').execute();
      for (const p of plans) expect(JSON.parse(p.database_versions)).toContain(`mariadb-${version}`);
      expect(demo.stdout).toContain(`\nDatabases are created on demo-db (mariadb ${version} at ${host}):\n`);
    });

    it("the printed curl creates a database; the mariadb client logs in with the answer's name and password", async () => {
      const curl = demo.stdout.split('\n').find((l) => l.includes('/databases'))!.trim();
      expect(curl).toMatch(/^curl -s -X POST /);
      const post = await exited(spawn('bash', ['-c', curl]) as any);
      expect(post.code).toBe(0);
      const answer = JSON.parse(post.stdout);
      const { name, password } = answer.data.attributes;
      expect(name).toBe('demo_solo_1');
      const job = answer.data.links['queue-job'];
      const token = /token (hp_\w+)/.exec(curl)![1];
      await pollUntil(
        () => fetch(job, { headers: { authorization: `token ${token}` } }).then((r) => r.json()).then((b: any) => b.data.attributes.status),
        (s) => s !== 'pending',
        'the create job',
        20_000,
      ).then((s) => expect(s).toBe('done'));
      // As printed: mariadb -h <host> -P <port> -u <name> -p <name>, the password typed at the prompt.
      const hint = demo.stdout.split('\n').find((l) => l.includes('mariadb -h'))!;
      const [, host, port] = /mariadb -h (\S+) -P (\d+) -u <name> -p <name>/.exec(hint)!;
      const server = { ...testServer(), url: `mysql://root@${host}:${port}` };
      const r = await mariadbClient(server, name, password, `CREATE TABLE ${name}.hello (id INT); SHOW TABLES FROM ${name}`);
      expect(r).toEqual({ code: 0, stdout: 'hello\n', stderr: '' });
    });
  });
});
