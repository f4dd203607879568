// MariaDB for the database tests: the machine's server at TEST_MARIADB_URL
// (mysql://root@127.0.0.1:3306/test in CI), names unique per test file so parallel files never
// meet, cleanup of what a file created, logins as the customer's user, and private `mariadbd`
// instances on a fresh datadir for the several-servers cases (never the machine's own server).
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { afterAll } from 'vitest';
import type { DatabaseServerConn } from '../../src/provisioning/databases/driver.js';
import { freePort } from './ports.js';
import { requirable } from './required.js';

export const MARIADB_URL = process.env.TEST_MARIADB_URL;

/**
 * `requireMariadb()('suite name', () => …)`: skips without TEST_MARIADB_URL or the `mariadb`
 * client (customers log in with it in the tests), fails so under CI_REQUIRE_ALL=1.
 */
export function requireMariadb(): ReturnType<typeof requirable> {
  if (!MARIADB_URL) return requirable('TEST_MARIADB_URL is not set');
  return requirable(findBinary('mariadb') ? null : 'the mariadb client is not installed (Debian package mariadb-client)');
}

/** Why a private mariadbd cannot be started here, or null. */
export function privateMariadbMissing(): string | null {
  const missing = ['mariadb-install-db', 'mariadbd'].filter((bin) => !findBinary(bin));
  if (!MARIADB_URL) missing.unshift('TEST_MARIADB_URL');
  return missing.length ? `${missing.join(', ')} not available` : null;
}

function findBinary(bin: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    const candidate = path.join(dir, bin);
    if (spawnSync('test', ['-x', candidate]).status === 0) return candidate;
  }
  return null;
}

/** The test server as the driver sees it: `testServer()` → { name: 'test', url: TEST_MARIADB_URL, accessHosts: ['%'] }. */
export function testServer(overrides: Partial<DatabaseServerConn> = {}): DatabaseServerConn {
  return { name: 'test', url: MARIADB_URL ?? 'mysql://root@127.0.0.1:3306', accessHosts: ['%'], ...overrides };
}

/**
 * Unique names for one test file, and cleanup of everything carrying them on the given servers
 * after the file: `const names = useTestNames(() => [server])`; `names.next()` → 'h1k9x2q7m_3'.
 */
export function useTestNames(servers: () => DatabaseServerConn[]) {
  // 9 characters: 'h' + 8 of base36 (a-z0-9); names stay far below 32 characters.
  const prefix = 'h' + crypto.randomBytes(6).readUIntBE(0, 6).toString(36).padStart(8, '0').slice(-8);
  let counter = 0;
  afterAll(async () => {
    for (const server of servers()) await dropByPrefix(server, prefix);
  });
  return {
    prefix,
    /** A fresh name, `suffix` appended as given (e.g. '_a' or 'xa' for the wildcard case). */
    next: (suffix = '') => `${prefix}${++counter}${suffix}`,
  };
}

/** One admin connection to `server`, closed after `fn`. */
export async function withAdmin<T>(server: DatabaseServerConn, fn: (conn: mysql.Connection) => Promise<T>): Promise<T> {
  const conn = await mysql.createConnection({ uri: server.url });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

async function dropByPrefix(server: DatabaseServerConn, prefix: string): Promise<void> {
  await withAdmin(server, async (conn) => {
    const like = `${prefix}%`; // the prefix is [a-z0-9] only: no LIKE wildcards in it
    const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT User, Host FROM mysql.user WHERE User LIKE ?', [like]);
    for (const u of users) await conn.query('DROP USER IF EXISTS ?@?', [u.User, u.Host]);
    const [dbs] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [like]);
    for (const d of dbs) await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(String(d.name))}`);
  });
}

/** A connection as the customer's user (`login(server, 'h1k9x2q7m_3', pw)`); rejects when the login is refused. */
export function login(server: DatabaseServerConn, user: string, password: string): Promise<mysql.Connection> {
  const url = new URL(server.url);
  return mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user,
    password,
    connectTimeout: 5_000,
  });
}

/**
 * Runs `statements` with the `mariadb` command-line client as `user`, as a customer would from a
 * shell; resolves with what it printed (tab-separated, no column names) and its exit code.
 */
export function mariadbClient(server: DatabaseServerConn, user: string, password: string, statements: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const url = new URL(server.url);
  const args = ['--protocol=TCP', `--host=${url.hostname}`, `--port=${url.port || 3306}`, `--user=${user}`, `--password=${password}`, '--batch', '--skip-column-names', '-e', statements];
  return new Promise((resolve) => {
    execFile('mariadb', args, { timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * 'ok' when the login works (the connection is closed again), 'denied' when the server refuses
 * the credentials, otherwise the error code: `await loginResult(…)` → 'denied'. A refusal comes as
 * ER_ACCESS_DENIED_ERROR or, for a user the server does not know, at times as
 * ER_ACCESS_DENIED_NO_PASSWORD_ERROR (it may answer an unknown user with an authentication
 * method mysql2 sends no password for); both mean the same to a customer.
 */
export async function loginResult(server: DatabaseServerConn, user: string, password: string): Promise<string> {
  try {
    await (await login(server, user, password)).end();
    return 'ok';
  } catch (err) {
    const code = String((err as { code?: string }).code);
    return code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR' ? 'denied' : code;
  }
}

export interface PrivateMariadb {
  /** mysql://root@127.0.0.1:<port> (root without password, as mariadb-install-db leaves it). */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A private mariadbd on a free 127.0.0.1 port with a fresh datadir in a temp dir, grants in force:
 * `const db2 = await startPrivateMariadb()` … `await db2.stop()` (by its PID, datadir removed).
 * A port is free only when asked; if another process binds it before mariadbd does, mariadbd
 * exits "Address already in use" and the next free port is tried.
 */
export async function startPrivateMariadb(): Promise<PrivateMariadb> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-mariadb-'));
  const datadir = path.join(dir, 'data');
  // mariadbd refuses to run as root unless told to.
  const asUser = process.getuid?.() === 0 ? ['--user=root'] : [];
  await promisify(execFile)(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${datadir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...asUser],
    { timeout: 60_000 },
  );
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      'mariadbd',
      [
        '--no-defaults',
        ...asUser,
        `--datadir=${datadir}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(dir, 'sock')}`,
        `--pid-file=${path.join(dir, 'pid')}`,
        `--log-error=${path.join(dir, `error-${attempt}.log`)}`,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = `mysql://root@127.0.0.1:${port}`;
    const kill = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
    };
    const stop = async () => {
      await kill();
      await fs.rm(dir, { recursive: true, force: true });
    };
    try {
      await waitUntilAnswers(url, child, datadir, path.join(dir, `error-${attempt}.log`));
      return { url, pid: child.pid!, stop };
    } catch (err) {
      await kill();
      if (attempt < 5 && /Address already in use/.test((err as Error).message)) continue;
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
}

async function waitUntilAnswers(url: string, child: ChildProcess, datadir: string, errorLog: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = await fs.readFile(errorLog, 'utf8').catch(() => '');
      throw new Error(`mariadbd exited with ${child.exitCode}: ${log.slice(-2000)}`);
    }
    try {
      const conn = await mysql.createConnection({ uri: url, connectTimeout: 1_000 });
      try {
        // Something else may answer on this port: only our own datadir counts.
        const [rows] = await conn.query('SELECT @@datadir AS datadir');
        const answered = String((rows as Array<{ datadir: string }>)[0]!.datadir).replace(/\/$/, '');
        if (answered === datadir) return;
      } finally {
        await conn.end();
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`mariadbd did not answer at ${url} within 30 s: ${(err as Error).message}`);
    }
    if (Date.now() > deadline) throw new Error(`mariadbd at ${url} is not the one started on ${datadir}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
