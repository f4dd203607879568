// The MariaDB driver against a real server (API guide "Databases"): what the
// customer's credentials can do after each operation, the `_` wildcard case, convergence of
// repeated operations, the live checks, usage, refusal of bad input before any SQL, and two
// servers at once. Needs TEST_MARIADB_URL (mysql://root@127.0.0.1:3306/test).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import {
  createStatements,
  mysqlDatabaseDriver,
  type DatabaseServerConn,
} from '../../../src/provisioning/databases/driver.js';
import { generateDatabasePassword, nativePasswordHash } from '../../../src/provisioning/databases/password.js';
import {
  login,
  loginResult,
  privateMariadbMissing,
  requireMariadb,
  startPrivateMariadb,
  testServer,
  useTestNames,
  withAdmin,
  type PrivateMariadb,
} from '../../helpers/mariadb.js';
import { requirable } from '../../helpers/required.js';

/** A database spec with its plaintext, which only the test knows. */
function credentials() {
  const password = generateDatabasePassword();
  return { password, passwordHash: nativePasswordHash(password) };
}

async function showDatabases(conn: mysql.Connection): Promise<string[]> {
  const [rows] = await conn.query<mysql.RowDataPacket[]>('SHOW DATABASES');
  return rows.map((r) => String(r.Database)).sort();
}

/** The error code of `conn.query(sql)`, or 'ok'. */
async function queryResult(conn: mysql.Connection, sql: string): Promise<string> {
  try {
    await conn.query(sql);
    return 'ok';
  } catch (err) {
    return String((err as { code?: string }).code);
  }
}

describe('database driver: statements', () => {
  it('grants on the name with `_` escaped, one account per access host, create then alter', () => {
    const hash = nativePasswordHash('x');
    const server: DatabaseServerConn = { name: 's', url: 'mysql://root@127.0.0.1:1', accessHosts: ['%', 'localhost'] };
    expect(createStatements(server, { name: 'c1_db_2', passwordHash: hash })).toEqual([
      'CREATE DATABASE IF NOT EXISTS `c1_db_2`',
      `CREATE USER IF NOT EXISTS 'c1_db_2'@'%' IDENTIFIED WITH mysql_native_password AS '${hash}'`,
      `ALTER USER 'c1_db_2'@'%' IDENTIFIED WITH mysql_native_password AS '${hash}'`,
      "GRANT ALL PRIVILEGES ON `c1\\_db\\_2`.* TO 'c1_db_2'@'%'",
      `CREATE USER IF NOT EXISTS 'c1_db_2'@'localhost' IDENTIFIED WITH mysql_native_password AS '${hash}'`,
      `ALTER USER 'c1_db_2'@'localhost' IDENTIFIED WITH mysql_native_password AS '${hash}'`,
      "GRANT ALL PRIVILEGES ON `c1\\_db\\_2`.* TO 'c1_db_2'@'localhost'",
    ]);
  });

  it('refuses bad names, hashes and access hosts before connecting', async () => {
    // Port 1 answers nothing: a connection attempt would fail with a different error.
    const nowhere: DatabaseServerConn = { name: 'nowhere', url: 'mysql://root@127.0.0.1:1', accessHosts: ['%'] };
    const driver = mysqlDatabaseDriver({ connectTimeoutMs: 500 });
    const hash = nativePasswordHash('x');
    const badNames = ['', 'Upper', 'a-b', 'a b', "a';DROP DATABASE x;--", 'a`b', 'é', 'x'.repeat(33)];
    for (const name of badNames) {
      await expect(driver.create(nowhere, { name, passwordHash: hash })).rejects.toThrow(/^invalid database name/);
      await expect(driver.setPassword(nowhere, { name, passwordHash: hash })).rejects.toThrow(/^invalid database name/);
      await expect(driver.drop(nowhere, { name })).rejects.toThrow(/^invalid database name/);
      await expect(driver.isCreated(nowhere, { name, passwordHash: hash })).rejects.toThrow(/^invalid database name/);
      await expect(driver.isDropped(nowhere, { name })).rejects.toThrow(/^invalid database name/);
      await expect(driver.usage(nowhere, ['ok_name', name])).rejects.toThrow(/^invalid database name/);
    }
    for (const passwordHash of ['secret', hash.toLowerCase(), hash.slice(1), `${hash}'`, `${hash}0`]) {
      await expect(driver.create(nowhere, { name: 'ok_name', passwordHash })).rejects.toThrow(/^invalid password hash/);
      await expect(driver.setPassword(nowhere, { name: 'ok_name', passwordHash })).rejects.toThrow(/^invalid password hash/);
    }
    for (const accessHosts of [[], ["x'"], ['a\\b'], ['']]) {
      await expect(driver.create({ ...nowhere, accessHosts }, { name: 'ok_name', passwordHash: hash })).rejects.toThrow(/access host/);
    }
    // The same driver does reach for the server once the input is fine.
    await expect(driver.isDropped(nowhere, { name: 'ok_name' })).rejects.toThrow(/^database server nowhere: .*ECONNREFUSED/);
    await driver.close();
  });
});

describe('database passwords', () => {
  it('are 20 characters of [A-Za-z0-9], every character in use, never repeated', () => {
    const passwords = Array.from({ length: 2000 }, generateDatabasePassword);
    for (const pw of passwords) expect(pw).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(new Set(passwords).size).toBe(passwords.length);
    expect(new Set(passwords.join('')).size).toBe(62);
  });
});

requireMariadb()('database driver on MariaDB', () => {
  const server = testServer();
  const names = useTestNames(() => [server]);
  const driver = mysqlDatabaseDriver();
  afterAll(() => driver.close());

  it('hashes passwords the way the server does', async () => {
    const passwords = [generateDatabasePassword(), generateDatabasePassword(), "with ' \" \\ % _ and ü"];
    await withAdmin(server, async (conn) => {
      for (const pw of passwords) {
        const [[row]] = await conn.query<mysql.RowDataPacket[]>('SELECT PASSWORD(?) AS h', [pw]);
        expect(nativePasswordHash(pw)).toBe(row.h);
      }
    });
  });

  it('create: the password logs in, sees only its database and can create a table', async () => {
    const other = names.next();
    await driver.create(server, { name: other, ...credentials() });
    const name = names.next();
    const { password, passwordHash } = credentials();
    expect(await driver.isCreated(server, { name, passwordHash })).toBe(false);
    await driver.create(server, { name, passwordHash });
    expect(await driver.isCreated(server, { name, passwordHash })).toBe(true);

    const conn = await login(server, name, password);
    try {
      expect(await showDatabases(conn)).toEqual(['information_schema', name].sort());
      await conn.query(`USE ${mysql.escapeId(name)}`);
      await conn.query('CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
      await conn.query("INSERT INTO t VALUES (1, 'x')");
      const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT v FROM t');
      expect(rows.map((r) => r.v)).toEqual(['x']);
      expect(await queryResult(conn, `USE ${mysql.escapeId(other)}`)).toBe('ER_DBACCESS_DENIED_ERROR');
    } finally {
      await conn.end();
    }
  });

  it('the `_` wildcard case: the user of x_a cannot reach xxa', async () => {
    const base = names.next();
    const [underscore, sibling] = [`${base}_a`, `${base}xa`];
    const u = credentials();
    await driver.create(server, { name: sibling, ...credentials() });
    await driver.create(server, { name: underscore, passwordHash: u.passwordHash });
    const conn = await login(server, underscore, u.password);
    try {
      expect(await showDatabases(conn)).toEqual(['information_schema', underscore].sort());
      expect(await queryResult(conn, `CREATE TABLE ${mysql.escapeId(sibling)}.t (id INT)`)).toBe('ER_TABLEACCESS_DENIED_ERROR');
      expect(await queryResult(conn, `USE ${mysql.escapeId(sibling)}`)).toBe('ER_DBACCESS_DENIED_ERROR');
    } finally {
      await conn.end();
    }
  });

  it('create twice converges on the last hash; isCreated sees a wider grant and a missing account', async () => {
    const name = names.next('_c');
    const first = credentials();
    const second = credentials();
    await driver.create(server, { name, passwordHash: first.passwordHash });
    await driver.create(server, { name, passwordHash: first.passwordHash });
    await driver.create(server, { name, passwordHash: second.passwordHash });
    expect(await driver.isCreated(server, { name, passwordHash: second.passwordHash })).toBe(true);
    expect(await driver.isCreated(server, { name, passwordHash: first.passwordHash })).toBe(false);
    expect(await loginResult(server, name, second.password)).toBe('ok');
    expect(await loginResult(server, name, first.password)).toBe('denied');

    const twoHosts = { ...server, accessHosts: ['%', 'localhost'] };
    expect(await driver.isCreated(twoHosts, { name, passwordHash: second.passwordHash })).toBe(false);
    await driver.create(twoHosts, { name, passwordHash: second.passwordHash });
    expect(await driver.isCreated(twoHosts, { name, passwordHash: second.passwordHash })).toBe(true);

    await withAdmin(server, (conn) => conn.query('GRANT SELECT ON mysql.* TO ?@?', [name, '%']));
    expect(await driver.isCreated(server, { name, passwordHash: second.passwordHash })).toBe(false);
  });

  it('a create or drop stopped after any statement ends in the same state when run again', async () => {
    const twoHosts = { ...server, accessHosts: ['%', 'localhost'] };
    const probe = createStatements(twoHosts, { name: 'x', passwordHash: nativePasswordHash('x') });
    for (let done = 0; done <= probe.length; done++) {
      const name = names.next();
      const { password, passwordHash } = credentials();
      // What a killed job left behind: the first `done` statements of an earlier attempt.
      const earlier = createStatements(twoHosts, { name, ...credentials() }).slice(0, done);
      await withAdmin(server, async (conn) => {
        for (const sql of earlier) await conn.query(sql);
      });
      await driver.create(twoHosts, { name, passwordHash });
      expect(await driver.isCreated(twoHosts, { name, passwordHash })).toBe(true);
      expect(await loginResult(server, name, password)).toBe('ok');
    }
    // Drop stopped half-way: users gone, database still there (and the reverse).
    const [a, b] = [names.next(), names.next()];
    await driver.create(twoHosts, { name: a, ...credentials() });
    await driver.create(twoHosts, { name: b, ...credentials() });
    await withAdmin(server, async (conn) => {
      await conn.query('DROP USER ?@?, ?@?', [a, '%', a, 'localhost']);
      await conn.query(`DROP DATABASE ${mysql.escapeId(b)}`);
    });
    for (const name of [a, b]) {
      expect(await driver.isDropped(twoHosts, { name })).toBe(false);
      await driver.drop(twoHosts, { name });
      expect(await driver.isDropped(twoHosts, { name })).toBe(true);
    }
  });

  it('setPassword: the new password works, the old one fails, open sessions are ended', async () => {
    const name = names.next();
    const old = credentials();
    const next = credentials();
    await driver.create(server, { name, passwordHash: old.passwordHash });
    const session = await login(server, name, old.password);
    session.on('error', () => {}); // the kill arrives as a connection error
    expect(await queryResult(session, 'SELECT 1')).toBe('ok');

    await driver.setPassword(server, { name, passwordHash: next.passwordHash });
    expect(await queryResult(session, 'SELECT 1')).not.toBe('ok');
    session.destroy();
    expect(await loginResult(server, name, old.password)).toBe('denied');
    expect(await loginResult(server, name, next.password)).toBe('ok');
    expect(await driver.isCreated(server, { name, passwordHash: next.passwordHash })).toBe(true);
    await driver.setPassword(server, { name, passwordHash: next.passwordHash });
    expect(await loginResult(server, name, next.password)).toBe('ok');
  });

  it('drop: database and users gone, sessions ended, repeatable', async () => {
    const name = names.next();
    const keep = names.next();
    const { password, passwordHash } = credentials();
    const twoHosts = { ...server, accessHosts: ['%', 'localhost'] };
    await driver.create(twoHosts, { name, passwordHash });
    await driver.create(server, { name: keep, ...credentials() });
    const session = await login(server, name, password);
    session.on('error', () => {});
    expect(await driver.isDropped(server, { name })).toBe(false);

    // The server lists one host now; the account made for 'localhost' goes too.
    await driver.drop(server, { name });
    expect(await queryResult(session, 'SELECT 1')).not.toBe('ok');
    session.destroy();
    expect(await driver.isDropped(server, { name })).toBe(true);
    expect(await driver.isCreated(server, { name, passwordHash })).toBe(false);
    expect(await loginResult(server, name, password)).toBe('denied');
    await withAdmin(server, async (conn) => {
      const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT Host FROM mysql.user WHERE User = ?', [name]);
      expect(users).toEqual([]);
      expect((await showDatabases(conn)).filter((d) => d.startsWith(names.prefix))).toContain(keep);
      expect(await showDatabases(conn)).not.toContain(name);
    });
    await driver.drop(server, { name });
    expect(await driver.isDropped(server, { name })).toBe(true);
    expect(await driver.isDropped(server, { name: keep })).toBe(false);
  });

  it('usage: data and index bytes per existing database', async () => {
    const [empty, full, absent] = [names.next(), names.next(), names.next()];
    const { password, passwordHash } = credentials();
    await driver.create(server, { name: empty, ...credentials() });
    await driver.create(server, { name: full, passwordHash });
    const before = await driver.usage(server, [empty, full, absent]);
    expect([...before.entries()].sort()).toEqual([
      [empty, 0],
      [full, 0],
    ]);

    const conn = await login(server, full, password);
    try {
      await conn.query(`USE ${mysql.escapeId(full)}`);
      await conn.query('CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200), KEY (v))');
      for (let i = 0; i < 20; i++) await conn.query('INSERT INTO t VALUES (?, ?)', [i, 'x'.repeat(200)]);
      await conn.query('ANALYZE TABLE t');
    } finally {
      await conn.end();
    }
    const after = await driver.usage(server, [empty, full, absent]);
    expect(after.get(empty)).toBe(0);
    expect(after.get(full)).toBeGreaterThan(0);
    expect(after.has(absent)).toBe(false);
    expect(await driver.usage(server, [])).toEqual(new Map());
  });
});

requirable(privateMariadbMissing())('database driver on two MariaDB servers', () => {
  const main = testServer();
  let second: DatabaseServerConn;
  let db2: PrivateMariadb | undefined;
  const names = useTestNames(() => [main]); // the private server goes away whole
  const driver = mysqlDatabaseDriver();

  beforeAll(async () => {
    db2 = await startPrivateMariadb();
    second = { name: 'db2', url: db2.url, accessHosts: ['%'] };
    // A server default that changes how statements are read and how SHOW GRANTS quotes names
    // (ANSI_QUOTES): the driver pins its own sql_mode on every admin connection.
    await withAdmin(second, (conn) => conn.query("SET GLOBAL sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'"));
  });
  afterAll(async () => {
    await driver.close();
    await db2?.stop();
  });

  it('acts on the server it is given, one pool each', async () => {
    const onSecond = names.next('_b');
    const onBoth = names.next();
    const s = credentials();
    await driver.create(second, { name: onSecond, passwordHash: s.passwordHash });
    await driver.create(main, { name: onBoth, ...credentials() });
    await driver.create(second, { name: onBoth, ...credentials() });

    expect(await driver.isCreated(second, { name: onSecond, passwordHash: s.passwordHash })).toBe(true);
    expect(await driver.isDropped(main, { name: onSecond })).toBe(true);
    expect(await loginResult(second, onSecond, s.password)).toBe('ok');
    expect(await loginResult(main, onSecond, s.password)).toBe('denied');

    await driver.drop(second, { name: onBoth });
    expect(await driver.isDropped(second, { name: onBoth })).toBe(true);
    expect(await driver.isDropped(main, { name: onBoth })).toBe(false);
  });
});
