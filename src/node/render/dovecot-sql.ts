// The mail directory's SQL for Dovecot, in 2.3's or 2.4's variables. `active = 0` is a deleted
// address: logins (password) and deliveries (user as lmtp) stop at that commit, while the service
// doveadm still finds the row: removing the address's mail goes through doveadm, which needs the
// home. iterate lists every row for the same reason. `active` is an integer on both engines.
import { tablePrefix, type DovecotVersion, type MailFacts } from './facts.js';

export interface DovecotQueries {
  password: string;
  user: string;
  iterate: string;
  /** An application password: the offered secret's SHA-256, in hex, is looked up. */
  app: string;
}

export function sqlQueries(f: MailFacts, version: DovecotVersion): DovecotQueries {
  const t = tablePrefix(f);
  const v = version === '2.3' ? { user: '%u', service: '%s', sha256: '%{sha256:password}' } : { user: '%{user}', service: '%{protocol}', sha256: '%{password | sha256 | hexlify}' };
  // 2.3 sets the quota by rule, 2.4 by size (bytes, with the B that tells them from a count).
  const quota = version === '2.3' ? "'*:bytes=' || quota_bytes AS quota_rule" : "quota_bytes || 'B' AS quota_storage_size";
  const mine = `server = '${f.name}'`;
  return {
    password: `SELECT address AS user, password_hash AS password FROM ${t}mail_users WHERE address = '${v.user}' AND active = 1 AND ${mine}`,
    user: `SELECT ${quota} FROM ${t}mail_users WHERE address = '${v.user}' AND ${mine} AND (active = 1 OR '${v.service}' = 'doveadm')`,
    iterate: `SELECT address AS user FROM ${t}mail_users WHERE ${mine}`,
    app:
      `SELECT a.address AS user, NULL AS password, 'Y' AS nopassword, a.id AS hostplane_app_password_id FROM ${t}mail_app_passwords a ` +
      `JOIN ${t}mail_users u ON u.address = a.address WHERE a.address = '${v.user}' AND u.active = 1 AND u.${mine} AND a.secret_sha256 = '${v.sha256}'`,
  };
}

/**
 * libpq's settings for a store across the network (a node): TLS checked against the roots, and a
 * connection that stops answering given up after seconds, not TCP's minutes, so lookups fail
 * (mail deferred with 4xx) instead of hanging while the store is unreachable.
 */
export const REMOTE_PQ: [string, string][] = [
  ['sslmode', 'verify-full'],
  ['sslrootcert', ''],
  ['connect_timeout', '5'],
  ['keepalives_idle', '5'],
  ['keepalives_interval', '2'],
  ['keepalives_count', '2'],
  ['tcp_user_timeout', '5000'],
];

/** Dovecot 2.3's `connect`: libpq's key=value string on PostgreSQL, the file's path on SQLite. */
export function sqlConnect(f: MailFacts): string {
  const s = f.store;
  if (s.driver === 'sqlite') return s.path;
  const tls = s.sslRootCert ? ` ${REMOTE_PQ.map(([k, v]) => `${k}=${k === 'sslrootcert' ? pqValue(s.sslRootCert!) : v}`).join(' ')}` : '';
  return `host=${pqValue(s.host)} port=${s.port} dbname=${pqValue(s.dbname)} user=${pqValue(s.user)} password=${pqValue(s.password)}${tls}`;
}

/** A libpq connection-string value: quoted when it holds anything but plain characters. */
export function pqValue(v: string): string {
  return /^[A-Za-z0-9._/:+-]+$/.test(v) ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
