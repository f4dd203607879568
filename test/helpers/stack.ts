// The local stack in tests (docs/decisions/0008-web-servers.md; deploy/local/up.sh, down.sh): what it
// needs (skipped without, failed under CI_REQUIRE_ALL=1), and the scripts themselves
// (test/helpers/stack-scripts.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { requirable } from './required.js';

export { DOWN, ROOT, UP, freeBase, script, scriptEnv, shellQuoted, unregisterHint, upOnFreePorts, STACK_UP_MS } from './stack-scripts.js';

/** The installed PHP-FPM binaries up.sh registers: { '8.2': '/usr/sbin/php-fpm8.2' }. */
export const PHP: Record<string, string> = Object.fromEntries(
  (existsSync('/usr/sbin') ? readdirSync('/usr/sbin') : [])
    .map((f) => /^php-fpm(\d+\.\d+)$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1], `/usr/sbin/${m[0]}`]),
);

export function stackMissing(): string | null {
  const absent = ['caddy', 'bash', 'jq', 'curl', 'setsid'].filter((bin) => spawnSync('bash', ['-c', `command -v ${bin}`]).status !== 0);
  if (absent.length) return `${absent.join(', ')} not installed`;
  if (!Object.keys(PHP).length) return 'no /usr/sbin/php-fpm<version> installed (Debian package php8.2-fpm)';
  return null;
}
/** `describeStack('suite', () => …)`: skips without caddy, bash, jq, curl or php-fpm; fails so under CI_REQUIRE_ALL=1. */
export const describeStack = requirable(stackMissing());

/** What the stack's mail part needs beyond the rest: root, Dovecot, Postfix, setpriv, psql. */
export function mailMissing(): string | null {
  if (process.getuid?.() !== 0) return 'the mail part of the stack runs Postfix and Dovecot, which need root';
  const absent = ['dovecot', 'postfix', 'setpriv', 'psql'].filter(
    (bin) => spawnSync('bash', ['-c', `PATH=$PATH:/usr/sbin command -v ${bin}`]).status !== 0,
  );
  if (absent.length) return `${absent.join(', ')} not installed (Debian: dovecot-imapd dovecot-lmtpd dovecot-pgsql dovecot-sqlite postfix postfix-pgsql postfix-sqlite postgresql-client)`;
  return null;
}
/** `describeMailStack('suite', () => …)`: as describeStack, and skips without what mailMissing() names. */
export const describeMailStack = requirable(stackMissing() ?? mailMissing());



/**
 * What the stack's rspamd (docs/decisions/0011-antispam-and-autoresponder.md) needs beyond the mail
 * part: rspamd and its user _rspamd.
 */
export function rspamdMissing(): string | null {
  if (spawnSync('bash', ['-c', 'command -v rspamd']).status !== 0) return 'rspamd is not installed (Debian: rspamd)';
  if (spawnSync('getent', ['passwd', '_rspamd']).status !== 0) return 'there is no system user _rspamd (the rspamd package makes it)';
  return null;
}
/** `describeRspamdStack('suite', () => …)`: as describeMailStack, and skips without what rspamdMissing() names. */
export const describeRspamdStack = requirable(stackMissing() ?? mailMissing() ?? rspamdMissing());

/**
 * What the stack's DNS secondary (STACK_DNS_SECONDARY=knot; docs/decisions/0013-dns-secondaries.md)
 * needs beyond Caddy: knotd.
 */
export function knotMissing(): string | null {
  if (spawnSync('bash', ['-c', 'PATH=$PATH:/usr/sbin command -v knotd']).status === 0) return null;
  return 'knotd is not installed (Debian: knot)';
}
/** `describeKnotStack('suite', () => …)`: as describeStack, and skips without knotd. */
export const describeKnotStack = requirable(stackMissing() ?? knotMissing());
