// The lab's two shapes (decision 0018 "The lab"): a company of five hosts, or one server with every
// role, and a client on 198.18.0.0/24, the services on the bridge address, and the names of everything it creates. Names carry an id
// derived from the lab's directory, so two labs (a test's and a person's) never share a
// namespace, interface, cgroup or machine name.
import crypto from 'node:crypto';
import path from 'node:path';

export const SUBNET_PREFIX = 24;
export const BRIDGE_ADDRESS = '198.18.0.1';
export const REPO_PORT = 8000;
/** Pebble's ACME directory and management ports on the bridge address. */
export const ACME_PORT = 14000;
export const ACME_MANAGEMENT_PORT = 15000;
/** The zone the lab's resolver answers itself; every other name goes to hostplane's DNS on the api host. */
export const LAB_ZONE = 'lab.test';
export const ACME_NAME = 'acme.lab.test';
/** Where every host finds lab-root.pem (Pebble's issuing root and the CA of its HTTPS). */
export const LAB_ROOT_IN_HOST = '/etc/hostplane-lab/lab-root.pem';
export const CACHE_DIR = '/var/cache/hostplane-lab';
export const RELEASE = 'trixie';
export const MIRROR = 'http://deb.debian.org/debian';

export type HostName = 'api' | 'web' | 'mail' | 'db' | 'ns2' | 'host';

export interface HostPlan {
  name: HostName;
  address: string;
  /** The host's own name first, then its other names in /etc/hosts. */
  fqdns: string[];
}

/** The operator guide's "Several servers". */
const COMPANY: HostPlan[] = [
  { name: 'api', address: '198.18.0.10', fqdns: ['api.lab.test', 'ns1.lab.test'] },
  { name: 'web', address: '198.18.0.11', fqdns: ['web1.lab.test'] },
  { name: 'mail', address: '198.18.0.12', fqdns: ['mx1.lab.test'] },
  { name: 'db', address: '198.18.0.13', fqdns: ['db1.lab.test'] },
  // A Knot secondary of the api host's DNS server, on a host of its own.
  { name: 'ns2', address: '198.18.0.14', fqdns: ['ns2.lab.test'] },
];

/** The operator guide's "One Debian 13 server": every role on one host. */
const ONE_SERVER: HostPlan[] = [{ name: 'host', address: '198.18.0.10', fqdns: ['host.lab.test'] }];

export const SHAPES = ['company', 'one-server'] as const;
export type Shape = (typeof SHAPES)[number];

/** The hosts of a shape; the first runs the API and hostplane's DNS server. */
export const hostsOf = (shape: Shape): HostPlan[] => (shape === 'one-server' ? ONE_SERVER : COMPANY);

export const CLIENT_ADDRESS = '198.18.0.100';

/** Everything named after one lab directory. */
export interface Names {
  id: string;
  bridgeNetns: string;
  clientNetns: string;
  hostNetns(host: string): string;
  /** The bridge inside the bridge namespace. */
  bridge: string;
  /** The bridge side of a member's veth pair (in the bridge namespace); ≤ 15 characters. */
  vethOuter(member: string): string;
  /** The member side, inside the member's namespace. */
  vethInner: string;
  machine(host: string): string;
  /** The host's own cgroup v2 group's name, so the containers' systemd instances never share one. */
  cgroup(host: string): string;
}

export function names(labDir: string): Names {
  const id = crypto.createHash('sha256').update(path.resolve(labDir)).digest('hex').slice(0, 6);
  return {
    id,
    bridgeNetns: `hpl-${id}-br`,
    clientNetns: `hpl-${id}-client`,
    hostNetns: (h) => `hpl-${id}-${h}`,
    bridge: `hpl${id}br`,
    vethOuter: (m) => `hpl${id}-${m.slice(0, 4)}`,
    vethInner: `hpl${id}`,
    machine: (h) => `hpl-${id}-${h}`,
    cgroup: (h) => `hpl-${id}-${h}`,
  };
}

/** /etc/hosts of every host: the lab's names, then localhost. */
export function etcHosts(self: HostPlan, hosts: HostPlan[]): string {
  const lines = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];
  for (const h of hosts) lines.push(`${h.address}\t${h.fqdns.join(' ')}${h === self ? ` ${h.name}` : ''}`);
  lines.push(`${BRIDGE_ADDRESS}\t${ACME_NAME}`);
  return `${lines.join('\n')}\n`;
}

/** The names under lab.test and their IPv4 addresses: what the resolver answers (and /etc/hosts says). */
export function labNames(hosts: HostPlan[]): Record<string, string> {
  const out: Record<string, string> = { [ACME_NAME]: BRIDGE_ADDRESS };
  for (const h of hosts) for (const f of h.fqdns) out[f] = h.address;
  return out;
}

export const repoUrl = () => `http://${BRIDGE_ADDRESS}:${REPO_PORT}/`;
export const acmeDirectoryUrl = () => `https://${BRIDGE_ADDRESS}:${ACME_PORT}/dir`;
