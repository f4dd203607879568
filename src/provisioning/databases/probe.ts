// What a database server is, asked before it is registered: its flavour and
// version from `SELECT VERSION()`, and the anonymous accounts that would shadow a customer's
// `user@'%'` (a client from localhost matches `''@'localhost'` first). Errors never carry the
// admin password: mysql2's messages name the user and host only, and the password is cut out of
// anything they say regardless.
import mysql from 'mysql2/promise';

/** Where and as whom to connect: parsed from a server's `mysql://admin:password@host:port`. */
export interface ServerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface ProbeResult {
  flavour: 'mariadb' | 'mysql';
  /** major.minor, e.g. `10.11`. */
  version: string;
  /** The full `SELECT VERSION()`, e.g. `10.11.19-MariaDB-0+deb12u1`. */
  versionString: string;
  /** Anonymous accounts as `''@'host'`; null when the admin user may not read `mysql.user`. */
  anonymousAccounts: string[] | null;
}

/** A server that could not be asked; `message` names host, port and user, never the password. */
export class ProbeError extends Error {}

const CONNECT_TIMEOUT_MS = 5_000;

/** What `SELECT VERSION()` says: `flavourOf('10.11.19-MariaDB-0+deb12u1')` → `{ flavour: 'mariadb', version: '10.11' }`. */
export function flavourOf(versionString: string): { flavour: 'mariadb' | 'mysql'; version: string } {
  const m = /^(\d+)\.(\d+)/.exec(versionString);
  return { flavour: /mariadb/i.test(versionString) ? 'mariadb' : 'mysql', version: m ? `${m[1]}.${m[2]}` : versionString };
}

/**
 * Connects once (5-s timeout), asks, and closes:
 * `await probeServer({ host: '127.0.0.1', port: 3306, user: 'root', password: '' })` →
 * `{ flavour: 'mariadb', version: '10.11', … }`.
 */
export async function probeServer(a: ServerAddress): Promise<ProbeResult> {
  const scrub = (text: string) => (a.password ? text.split(a.password).join('***') : text);
  let conn: mysql.Connection | undefined;
  try {
    conn = await mysql.createConnection({
      host: a.host, port: a.port, user: a.user, password: a.password, connectTimeout: CONNECT_TIMEOUT_MS, multipleStatements: false,
    });
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    const versionString = String(rows[0]?.v ?? '');
    let anonymousAccounts: string[] | null;
    try {
      // Aliased: a bare column reference comes back under the column's own name (`Host`).
      const [users] = await conn.query<mysql.RowDataPacket[]>("SELECT Host AS host FROM mysql.user WHERE User = ''");
      anonymousAccounts = users.map((u) => `''@'${String(u.host)}'`);
    } catch {
      anonymousAccounts = null;
    }
    return { ...flavourOf(versionString), versionString, anonymousAccounts };
  } catch (e) {
    const err = e as { message?: string; code?: string };
    const why = scrub(err.message || err.code || 'no answer');
    throw new ProbeError(`Cannot connect to the database server at ${a.host}:${a.port} as ${a.user}: ${why}.`);
  } finally {
    // end() says goodbye; a connection that never opened or broke has nothing to say it to.
    await conn?.end().catch(() => conn?.destroy());
  }
}
