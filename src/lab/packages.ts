// The Debian packages the lab's hosts may install (decision 0018 "The lab"): the lab repository
// holds these and their dependencies, so `apt-get install` in a host needs no route out. Add a
// package here and the next `lab up` downloads only what is missing.

/** Installed in the cached root filesystem itself (debootstrap, then apt in a chroot). */
export const ROOTFS_BASE = ['systemd', 'systemd-sysv', 'dbus', 'iproute2', 'iputils-ping', 'ca-certificates', 'curl', 'procps', 'netbase'];
/** Installed by apt after debootstrap: debootstrap's resolver does not handle npm's alternatives. */
export const ROOTFS_EXTRA = ['nodejs', 'npm'];

/** What the node roles install (`hostplane node setup`), served by the lab repository. */
export const ROLE_PACKAGES = [
  // api + dns
  'postgresql',
  'redis-server',
  'caddy',
  'knot',
  'knot-dnsutils',
  // web
  'php8.4-fpm',
  'php8.4-mysql',
  // SFTP for the packages' users (OpenSSH's internal-sftp)
  'openssh-server',
  // mail
  'dovecot-imapd',
  'dovecot-lmtpd',
  'dovecot-sieve',
  'dovecot-pgsql',
  // the renderer's tests check the local stack's SQLite profile with Debian 13's Dovecot too
  'dovecot-sqlite',
  'postfix',
  'postfix-pgsql',
  'rspamd',
  // db
  'mariadb-server',
  // TLS: the ACME client of the nodes and the lab's ACME directory
  'lego',
  'pebble',
  // hostplane itself
  'nodejs',
  'npm',
];
