// The settings of the database bench (bench/databases.bench.ts says what each does), what its parts
// share, and the MariaDB server it creates databases on.
import crypto from 'node:crypto';
import path from 'node:path';
import mysql from 'mysql2/promise';

export const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const CREATES = num('BENCH_DB_CREATES', 50);
export const WARMUP = num('BENCH_DB_WARMUP', 5);
export const POLL_MS = num('BENCH_DB_POLL_MS', 0);
export const LOGIN_ATTEMPTS = num('BENCH_DB_LOGIN_ATTEMPTS', 2000);
export const HTTP_CLIENT = process.env.BENCH_DB_HTTP === 'fetch' ? 'fetch' : 'http';
export const COMPARE = process.env.BENCH_COMPARE ? path.resolve(process.env.BENCH_COMPARE) : null;
/** How often the client polls the job once the login works (its `done` time is read from finished_at). */
export const JOB_POLL_MS = 20;
export const LOGIN_LIMIT_MS = 10_000;
export const MARIADB_URL = process.env.BENCH_MARIADB_URL ?? process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
export const BASE_URL = 'https://api.example.com';
export const SERVER = 'bench-db';
/** Targets of the databases bench (docs/performance.md). */
export const TARGET_P50_MS = 300;
export const TARGET_X_FLOOR = 3;

/** Everything on MariaDB carries it: the package's Linux user (so its database names) and the floor's names. */
export const PREFIX = `bench_${crypto.randomBytes(6).readUIntBE(0, 6).toString(36).padStart(8, '0').slice(-8)}`;

export type EngineName = 'sqlite' | 'postgres';


/** Set by SIGINT/SIGTERM: the runs stop at the next step and the cleanup runs. */
export const signalled = { interrupted: false };
export const checkInterrupted = () => {
  if (signalled.interrupted) throw new Error('interrupted');
};

// ---- MariaDB -----------------------------------------------------------------------------------

export const mariadb = new URL(MARIADB_URL);

/** Drops every user and database starting with PREFIX_ (LIKE wildcards in it escaped). */
export async function dropBenchObjects(): Promise<{ users: number; databases: number }> {
  const conn = await mysql.createConnection({ uri: MARIADB_URL });
  try {
    const like = `${PREFIX}_`.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';
    const [users] = await conn.query<mysql.RowDataPacket[]>('SELECT User, Host FROM mysql.user WHERE User LIKE ?', [like]);
    for (const u of users) await conn.query('DROP USER IF EXISTS ?@?', [u.User, u.Host]);
    const [dbs] = await conn.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [like]);
    for (const d of dbs) await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(String(d.name))}`);
    return { users: users.length, databases: dbs.length };
  } finally {
    await conn.end();
  }
}

/** major.minor of the server, as an operator registers it: '10.11'. */
export async function serverVersion(): Promise<string> {
  const conn = await mysql.createConnection({ uri: MARIADB_URL });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    return /^(\d+\.\d+)/.exec(String(rows[0].v))![1];
  } finally {
    await conn.end();
  }
}
