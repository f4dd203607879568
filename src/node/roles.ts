// The roles a node can take and what each needs of the host (docs/decisions/0018-nodes-on-debian.md):
// the Debian 13 packages it installs and the ports it listens on, with the programs that may
// already hold them (ours, from an earlier run). Anything else on such a port stops the setup.

export const ROLES = ['api', 'dns', 'web', 'mail', 'db'] as const;
export type Role = (typeof ROLES)[number];

export interface PortNeed {
  port: number;
  proto: 'tcp' | 'udp';
  /** Process names (as `ss` shows them) that may hold the port: the role's own daemons. */
  ours: readonly string[];
}

export interface RoleNeeds {
  packages: readonly string[];
  ports: readonly PortNeed[];
}

const tcp = (port: number, ...ours: string[]): PortNeed => ({ port, proto: 'tcp', ours });
const udp = (port: number, ...ours: string[]): PortNeed => ({ port, proto: 'udp', ours });
// hostplane's own processes run as node (the unit's ExecStart) and show as such.
const HOSTPLANE = ['node', 'hostplane'];

export const NEEDS: Record<Role, RoleNeeds> = {
  api: {
    packages: ['caddy', 'postgresql', 'redis-server'],
    // The API itself and Caddy's admin API listen on loopback.
    ports: [tcp(80, 'caddy'), tcp(443, 'caddy'), tcp(2019, 'caddy'), tcp(5432, 'postgres'), tcp(6379, 'redis-server'), tcp(8081, ...HOSTPLANE)],
  },
  dns: { packages: [], ports: [tcp(53, ...HOSTPLANE), udp(53, ...HOSTPLANE)] },
  web: {
    // openssh-server: SFTP for the packages' users (decision 0023); port 22 is the operator's sshd too.
    packages: ['caddy', 'php8.4-fpm', 'php8.4-mysql', 'openssh-server'],
    ports: [tcp(80, 'caddy'), tcp(443, 'caddy')],
  },
  mail: {
    packages: ['dovecot-imapd', 'dovecot-lmtpd', 'dovecot-sieve', 'dovecot-pgsql', 'postfix', 'postfix-pgsql', 'rspamd', 'lego'],
    // Port 80: lego's own listener for the HTTP-01 challenge of the node's certificate.
    // 10040: hostplane's mail policy service, on loopback.
    ports: [tcp(25, 'master', 'smtpd'), tcp(465, 'master', 'smtpd'), tcp(587, 'master', 'smtpd'), tcp(80, 'lego'), tcp(143, 'dovecot', 'imap-login'), tcp(993, 'dovecot', 'imap-login'), tcp(8080, 'dovecot', 'doveadm'), tcp(10040, ...HOSTPLANE)],
  },
  db: { packages: ['mariadb-server'], ports: [tcp(80, 'lego'), tcp(3306, 'mariadbd')] },
};

/** The server of the dns role: hostplane's own, or Knot as a secondary of it on a host of its own. */
export const DNS_SERVERS = ['hostplane', 'knot'] as const;
export type DnsServer = (typeof DNS_SERVERS)[number];

const KNOT: RoleNeeds = { packages: ['knot'], ports: [tcp(53, 'knotd'), udp(53, 'knotd')] };

/** What `role` needs with the given DNS server. */
export const needsOf = (role: Role, dnsServer: DnsServer = 'hostplane'): RoleNeeds => (role === 'dns' && dnsServer === 'knot' ? KNOT : NEEDS[role]);

/** The roles whose daemons serve the node's own ACME certificate (lego), and the units reloaded when it is renewed. */
export const CERT_USERS: Partial<Record<Role, readonly string[]>> = {
  api: ['postgresql.service'],
  mail: ['dovecot.service', 'postfix.service'],
  db: ['mariadb.service'],
};

/** `--roles api,dns` → the roles in their canonical order, or the words that are not roles. */
export function parseRoles(list: string): { roles: Role[] } | { unknown: string[] } {
  const words = list.split(',').map((w) => w.trim()).filter(Boolean);
  const unknown = words.filter((w) => !(ROLES as readonly string[]).includes(w));
  if (unknown.length || !words.length) return { unknown: unknown.length ? unknown : [list] };
  return { roles: ROLES.filter((r) => words.includes(r)) };
}

/** The ports of `roles`, one entry per port and protocol, the owners of every role merged. */
export function portsOf(roles: readonly Role[], dnsServer?: DnsServer): PortNeed[] {
  const byKey = new Map<string, PortNeed>();
  for (const need of roles.flatMap((r) => needsOf(r, dnsServer).ports)) {
    const key = `${need.proto}/${need.port}`;
    const seen = byKey.get(key);
    byKey.set(key, seen ? { ...seen, ours: [...new Set([...seen.ours, ...need.ours])] } : need);
  }
  return [...byKey.values()];
}
