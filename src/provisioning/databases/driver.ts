// The database backend as job runs see it (API guide "Databases";
// docs/decisions/0004-provisioning-seams.md "Drivers"). One admin pool per registered server,
// statements built with mysql2's client-side escaping (`query()`: placeholders in CREATE USER are a
// parse error under `execute()`), every operation idempotent so that a job re-run after a kill at
// any point ends in the same state.
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { isNativePasswordHash } from './password.js';

/** A registered database server as the driver needs it (the admin URL carries its credentials). */
export interface DatabaseServerConn {
  name: string;
  /** mysql://admin[:password]@host:port */
  url: string;
  /** One account per entry, e.g. ['%'] or ['localhost', '10.0.0.%']. */
  accessHosts: string[];
}

/** A customer database: its name is also its user's name. */
export interface DatabaseSpec {
  name: string;
  /** mysql_native_password hash ('*' + 40 upper-case hex digits); never the plaintext. */
  passwordHash: string;
}

export interface DatabaseDriver {
  /** Creates database and one account per access host, granted on that database only; converges when repeated. */
  create(server: DatabaseServerConn, db: DatabaseSpec): Promise<void>;
  /** Sets the accounts' password and ends the user's open sessions. */
  setPassword(server: DatabaseServerConn, db: DatabaseSpec): Promise<void>;
  /** Removes every account of the user, ends its sessions, removes the database. */
  drop(server: DatabaseServerConn, db: { name: string }): Promise<void>;
  /** Live check after create/setPassword: database there, every access-host account has this hash and only the grant on it. */
  isCreated(server: DatabaseServerConn, db: DatabaseSpec): Promise<boolean>;
  /** Live check after drop: neither the database nor any account of the user is left. */
  isDropped(server: DatabaseServerConn, db: { name: string }): Promise<boolean>;
  /** Data + index bytes per existing database among `names` (absent from the map: no such database). */
  usage(server: DatabaseServerConn, names: string[]): Promise<Map<string, number>>;
  /** Ends every admin pool. */
  close(): Promise<void>;
}

export interface MysqlDatabaseDriverOptions {
  /** Milliseconds to wait for a connection to a server (default 10 000). */
  connectTimeoutMs?: number;
  /** Admin connections per server (default 2). */
  poolSize?: number;
}

const NAME = /^[a-z0-9_]{1,32}$/;
// Host patterns as MySQL accepts them in accounts: names, addresses, '%'/'_' wildcards, netmasks.
const HOST = /^[A-Za-z0-9.%_:/-]{1,255}$/;
// No NO_BACKSLASH_ESCAPES (mysql2 escapes with backslashes) and no ANSI_QUOTES, whatever the server's default.
const ADMIN_SQL_MODE = "SET SESSION sql_mode='STRICT_ALL_TABLES'";
const ER_NO_SUCH_THREAD = 1094;
/** `CREATE USER` of an account (or role) that exists. */
const ER_CANNOT_USER = 1396;

function checkName(name: string): void {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new Error(`invalid database name ${JSON.stringify(name)}: expected 1-32 characters of a-z, 0-9 and _`);
  }
}

function checkHash(hash: string): void {
  if (typeof hash !== 'string' || !isNativePasswordHash(hash)) {
    throw new Error('invalid password hash: expected a mysql_native_password hash (* and 40 upper-case hex digits)');
  }
}

function checkHosts(server: DatabaseServerConn): void {
  if (server.accessHosts.length === 0) throw new Error(`database server ${server.name} has no access hosts`);
  for (const host of server.accessHosts) {
    if (!HOST.test(host)) throw new Error(`database server ${server.name} has an invalid access host ${JSON.stringify(host)}`);
  }
}

/** 'name'@'host' */
const account = (name: string, host: string) => `${mysql.escape(name)}@${mysql.escape(host)}`;

/** The database as a grant pattern: `_` escaped, else it is a wildcard that opens sibling databases (t1_a → t1xa). */
export const grantPattern = (name: string) => name.replace(/_/g, '\\_');

// Accepted by MariaDB (10.4+) and MySQL 8 alike; `IDENTIFIED BY PASSWORD` is gone from MySQL 8.
const identifiedBy = (hash: string) => `IDENTIFIED WITH mysql_native_password AS ${mysql.escape(hash)}`;

const grantOwn = (name: string, who: string) => `GRANT ALL PRIVILEGES ON ${mysql.escapeId(grantPattern(name))}.* TO ${who}`;

/**
 * The SQL that `create` runs, in order, when anything of the database exists already (exported
 * for SQL-text tests): `createStatements(server, { name: 'c1_db1', passwordHash })`. A fresh
 * create runs freshCreateBatch instead.
 */
export function createStatements(server: DatabaseServerConn, db: DatabaseSpec): string[] {
  checkName(db.name);
  checkHash(db.passwordHash);
  checkHosts(server);
  const statements = [`CREATE DATABASE IF NOT EXISTS ${mysql.escapeId(db.name)}`];
  for (const host of server.accessHosts) {
    const who = account(db.name, host);
    // IF NOT EXISTS then ALTER: a retried job (or a reset that ran meanwhile) ends on this hash.
    statements.push(
      `CREATE USER IF NOT EXISTS ${who} ${identifiedBy(db.passwordHash)}`,
      `ALTER USER ${who} ${identifiedBy(db.passwordHash)}`,
      grantOwn(db.name, who),
    );
  }
  return statements;
}

/**
 * What `create` sends first, in one round trip: the database, then per access host a plain
 * `CREATE USER` and its grant — for a new database, the floor's statements and no more:
 * `freshCreateBatch(server, { name: 'c1_db1', passwordHash })`. A `CREATE USER` of an account
 * that exists fails (ER_CANNOT_USER) and the server runs nothing after it, so no grant reaches
 * an account whose password this job has not set; `create` then converges with createStatements.
 */
export function freshCreateBatch(server: DatabaseServerConn, db: DatabaseSpec): string {
  checkName(db.name);
  checkHash(db.passwordHash);
  checkHosts(server);
  const statements = [`CREATE DATABASE IF NOT EXISTS ${mysql.escapeId(db.name)}`];
  for (const host of server.accessHosts) {
    const who = account(db.name, host);
    statements.push(`CREATE USER ${who} ${identifiedBy(db.passwordHash)}`, grantOwn(db.name, who));
  }
  return statements.join(';\n');
}

/** The SQL that `setPassword` runs before ending the user's sessions. */
export function setPasswordStatements(server: DatabaseServerConn, db: DatabaseSpec): string[] {
  checkName(db.name);
  checkHash(db.passwordHash);
  checkHosts(server);
  return server.accessHosts.map((host) => `ALTER USER ${account(db.name, host)} ${identifiedBy(db.passwordHash)}`);
}

/** `const drivers = { databases: mysqlDatabaseDriver() }` … `await drivers.databases.close()`. */
export function mysqlDatabaseDriver(opts: MysqlDatabaseDriverOptions = {}): DatabaseDriver {
  const pools = new Map<string, Pool>();
  /** Connections whose session sql_mode is set (keyed by mysql2's underlying connection). */
  const pinned = new WeakSet<object>();

  function poolFor(server: DatabaseServerConn): Pool {
    let pool = pools.get(server.url);
    if (!pool) {
      pool = mysql.createPool({
        uri: server.url,
        connectionLimit: opts.poolSize ?? 2,
        maxIdle: 1,
        idleTimeout: 60_000,
        connectTimeout: opts.connectTimeoutMs ?? 10_000,
        // For create's one batch (freshCreateBatch). Every statement of this driver is built from
        // names, hosts and hashes checked against strict patterns, and values escaped by mysql2.
        multipleStatements: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
      });
      pools.set(server.url, pool);
    }
    return pool;
  }

  /** Runs `fn` on one admin connection; errors name the server, never carry the SQL or the URL. */
  async function withAdmin<T>(server: DatabaseServerConn, fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    let conn: PoolConnection | undefined;
    try {
      conn = await poolFor(server).getConnection();
      if (!pinned.has(conn.connection)) {
        await conn.query(ADMIN_SQL_MODE);
        pinned.add(conn.connection);
      }
      return await fn(conn);
    } catch (err) {
      const e = err as { message?: string; code?: string; fatal?: boolean };
      if (e.fatal) {
        conn?.destroy();
        conn = undefined;
      }
      throw Object.assign(new Error(`database server ${server.name}: ${e.message ?? String(err)}`), { code: e.code });
    } finally {
      conn?.release();
    }
  }

  async function rows(conn: PoolConnection, sql: string, values: unknown[] = []): Promise<RowDataPacket[]> {
    const [result] = await conn.query<RowDataPacket[]>(sql, values);
    return result;
  }

  /** Ends every session of `name` (admin sees them through PROCESS); a session gone meanwhile is fine. */
  async function killSessions(conn: PoolConnection, name: string): Promise<void> {
    const sessions = await rows(conn, 'SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?', [name]);
    for (const { ID } of sessions) {
      try {
        await conn.query(`KILL CONNECTION ${Number(ID)}`);
      } catch (err) {
        if ((err as { errno?: number }).errno !== ER_NO_SUCH_THREAD) throw err;
      }
    }
  }

  async function accountHosts(conn: PoolConnection, name: string): Promise<string[]> {
    return (await rows(conn, 'SELECT Host FROM mysql.user WHERE User = ?', [name])).map((r) => String(r.Host));
  }

  async function databaseExists(conn: PoolConnection, name: string): Promise<boolean> {
    return (await rows(conn, 'SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length > 0;
  }

  /** Only USAGE on *.* and ALL PRIVILEGES on the escaped name, nothing wider. */
  async function hasOnlyOwnGrant(conn: PoolConnection, name: string, host: string): Promise<boolean> {
    const grants = (await rows(conn, `SHOW GRANTS FOR ${account(name, host)}`)).map((r) => String(Object.values(r)[0]));
    const own = `GRANT ALL PRIVILEGES ON ${mysql.escapeId(grantPattern(name))}.* TO `;
    return grants.some((g) => g.startsWith(own)) && grants.every((g) => g.startsWith(own) || g.startsWith('GRANT USAGE ON *.* TO '));
  }

  return {
    async create(server, db) {
      const batch = freshCreateBatch(server, db);
      const statements = createStatements(server, db);
      await withAdmin(server, async (conn) => {
        try {
          await conn.query(batch);
          return;
        } catch (err) {
          // An account exists (a retried job, a reset of a database whose create failed): converge.
          if ((err as { errno?: number }).errno !== ER_CANNOT_USER) throw err;
        }
        // The ALTER after a CREATE USER is needed only when the user was there already (a retried
        // job, or a reset that ran meanwhile): MariaDB and MySQL then answer with note 1973.
        let justCreated = false;
        for (const sql of statements) {
          if (justCreated && sql.startsWith('ALTER USER')) {
            justCreated = false;
            continue;
          }
          const [result] = await conn.query<ResultSetHeader>(sql);
          justCreated = sql.startsWith('CREATE USER') && result.warningStatus === 0;
        }
      });
    },

    async setPassword(server, db) {
      const statements = setPasswordStatements(server, db);
      await withAdmin(server, async (conn) => {
        for (const sql of statements) await conn.query(sql);
        // After the ALTER, so no session with the old password can start behind the kill.
        await killSessions(conn, db.name);
      });
    },

    async drop(server, db) {
      checkName(db.name);
      checkHosts(server);
      await withAdmin(server, async (conn) => {
        // Every account of the user, also on hosts no longer in the server's list; users first, so
        // no new session starts behind the kill (DROP USER leaves open sessions alive).
        const hosts = new Set([...server.accessHosts, ...(await accountHosts(conn, db.name))]);
        for (const host of hosts) await conn.query(`DROP USER IF EXISTS ${account(db.name, host)}`);
        await killSessions(conn, db.name);
        await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(db.name)}`);
      });
    },

    async isCreated(server, db) {
      checkName(db.name);
      checkHash(db.passwordHash);
      checkHosts(server);
      return withAdmin(server, async (conn) => {
        if (!(await databaseExists(conn, db.name))) return false;
        const accounts = await rows(conn, 'SELECT Host, plugin, authentication_string FROM mysql.user WHERE User = ?', [db.name]);
        for (const host of server.accessHosts) {
          const a = accounts.find((r) => r.Host === host);
          if (!a || a.plugin !== 'mysql_native_password' || a.authentication_string !== db.passwordHash) return false;
          if (!(await hasOnlyOwnGrant(conn, db.name, host))) return false;
        }
        return true;
      });
    },

    async isDropped(server, db) {
      checkName(db.name);
      return withAdmin(server, async (conn) => !(await databaseExists(conn, db.name)) && (await accountHosts(conn, db.name)).length === 0);
    },

    async usage(server, names) {
      names.forEach(checkName);
      const usage = new Map<string, number>();
      if (names.length === 0) return usage;
      const found = await withAdmin(server, (conn) =>
        rows(
          conn,
          `SELECT s.SCHEMA_NAME AS name, COALESCE(SUM(t.DATA_LENGTH + t.INDEX_LENGTH), 0) AS bytes
             FROM information_schema.SCHEMATA s
             LEFT JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = s.SCHEMA_NAME
            WHERE s.SCHEMA_NAME IN (?)
            GROUP BY s.SCHEMA_NAME`,
          [names],
        ),
      );
      for (const r of found) usage.set(String(r.name), Number(r.bytes));
      return usage;
    },

    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.allSettled(all.map((p) => p.end()));
    },
  };
}
