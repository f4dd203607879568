// What `hostplane node setup` checks before it changes anything (docs/decisions/0018-nodes-on-debian.md
// "One command per node"): the OS and its release, root, the options, and that no port a role needs
// is held by a program that is not the role's own. Every problem is listed at once.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { domainNameProblem } from '../domain-name.js';
import { needsOf, portsOf, type DnsServer, type Role } from './roles.js';
import { parseHostPort } from '../host-port.js';

export interface Listener {
  proto: 'tcp' | 'udp';
  port: number;
  programs: string[];
}

/** What the host is, as read from it (readHost) or given by a test. */
export interface HostFacts {
  osRelease: string;
  uid: number;
  listening: Listener[];
  /** The host's global addresses (`ip addr`), IPv4 first: what DNS serves for its sites when --address is not given. */
  addresses: string[];
}

export interface SetupOptions {
  roles: Role[];
  name: string;
  /** The store for a node without the api role: postgres://… as the api node printed it. */
  store?: string;
  /** The ACME directory of every certificate (Let's Encrypt when absent). */
  acmeDirectory?: string;
  /** A file of PEM certificates the node trusts besides the system's (a private ACME CA). */
  acmeCaRoot?: string;
  acmeEmail?: string;
  /** What DNS serves for this node (web: the sites' A/AAAA); its global addresses when absent. */
  addresses?: string[];
  /** `NAME=value` settings written into hostplane.env. */
  set?: string[];
  /** The dns role's server [hostplane]. */
  dnsServer?: DnsServer;
  /** Knot's primary, `ip` or `ip:port`: hostplane's DNS server it follows [the --store host's address, port 53]. */
  dnsPrimary?: string;
}

/** `--dns-primary 192.0.2.10`, `192.0.2.10:5353`, `[2001:db8::1]:53` → host and port, or null. */
export function parseDnsPrimary(value: string): { host: string; port: number } | null {
  if (isIP(value)) return { host: value, port: 53 };
  const hp = parseHostPort(value);
  return hp && isIP(hp.host) ? hp : null;
}

export async function readHost(): Promise<HostFacts> {
  const osRelease = await fs.readFile('/etc/os-release', 'utf8').catch(() => '');
  const { stdout } = await promisify(execFile)('ss', ['-Hlntup']).catch(() => ({ stdout: '' }));
  const ip = await promisify(execFile)('ip', ['-j', 'addr', 'show', 'scope', 'global']).catch(() => ({ stdout: '[]' }));
  return { osRelease, uid: process.getuid?.() ?? -1, listening: parseSs(stdout), addresses: parseIpAddr(ip.stdout) };
}

/** `ip -j addr show scope global` → its addresses, IPv4 first, without temporary or deprecated ones. */
export function parseIpAddr(json: string): string[] {
  let links: { addr_info?: { family: string; local: string; temporary?: boolean; deprecated?: boolean }[] }[];
  try {
    links = JSON.parse(json || '[]') as typeof links;
  } catch {
    return [];
  }
  const all = links.flatMap((l) => l.addr_info ?? []).filter((a) => !a.temporary && !a.deprecated);
  return [...all.filter((a) => a.family === 'inet'), ...all.filter((a) => a.family === 'inet6')].map((a) => a.local);
}

/** `ss -Hlntup` lines → listeners: `tcp LISTEN 0 128 0.0.0.0:25 0.0.0.0:* users:(("master",pid=1,fd=13))`. */
export function parseSs(text: string): Listener[] {
  return text.split('\n').flatMap((line) => {
    const cols = line.trim().split(/\s+/);
    const port = Number(/:(\d+)$/.exec(cols[4] ?? '')?.[1]);
    if ((cols[0] !== 'tcp' && cols[0] !== 'udp') || !Number.isInteger(port)) return [];
    return [{ proto: cols[0], port, programs: [...line.matchAll(/\("([^"]+)",pid=/g)].map((m) => m[1]) }];
  });
}

const osField = (text: string, key: string) => new RegExp(`^${key}="?([^"\\n]*)"?$`, 'm').exec(text)?.[1];

/** Every reason not to go on; empty when the setup may start. */
export function preflightProblems(host: HostFacts, o: SetupOptions): string[] {
  const problems: string[] = [];
  const id = osField(host.osRelease, 'ID');
  const version = osField(host.osRelease, 'VERSION_ID');
  if (id !== 'debian' || version !== '13') {
    const pretty = osField(host.osRelease, 'PRETTY_NAME') ?? 'an unknown system (no /etc/os-release)';
    problems.push(`this is ${pretty}: hostplane node setup runs on Debian 13 (trixie)`);
  }
  if (host.uid !== 0) problems.push('it must run as root (it installs packages and writes /etc)');
  const nameProblem = domainNameProblem(o.name);
  if (nameProblem || !o.name.includes('.')) problems.push(`--name ${JSON.stringify(o.name)} is not the host's full domain name (e.g. web1.example.net)`);
  if (o.roles.includes('web') && !(o.addresses?.length || host.addresses.length)) problems.push('this host has no global address to serve its sites at: give --address');
  for (const a of o.addresses ?? []) if (!isIP(a)) problems.push(`--address ${JSON.stringify(a)} is not an IPv4 or IPv6 address`);
  // Every role but api works on the api node's store (the dns role: its zones, or Knot's registration).
  const needsStore = !o.roles.includes('api');
  if (o.dnsServer === 'knot') {
    if (!o.roles.includes('dns')) problems.push('--dns-server is the server of the dns role: give --roles dns too');
    if (o.roles.includes('api')) problems.push("--dns-server knot follows hostplane's DNS server of another host: not with the api role");
  }
  if (o.dnsPrimary !== undefined && (o.dnsServer !== 'knot' || !parseDnsPrimary(o.dnsPrimary))) {
    problems.push(`--dns-primary ${JSON.stringify(o.dnsPrimary)}: ${o.dnsServer === 'knot' ? 'not an IP address, with an optional port (192.0.2.10 or 192.0.2.10:53)' : 'only with --dns-server knot'}`);
  }
  if (needsStore && !o.store) problems.push('--store is required without the api role: the postgres://… URL the api node printed');
  if (o.store && !/^postgres(ql)?:\/\//.test(o.store)) problems.push('--store must be a postgres:// URL (nodes share the api node\'s PostgreSQL)');
  for (const need of portsOf(o.roles, o.dnsServer)) {
    const strangers = host.listening
      .filter((l) => l.proto === need.proto && l.port === need.port)
      .flatMap((l) => (l.programs.length ? l.programs : ['an unknown program']))
      .filter((p) => !need.ours.includes(p));
    if (strangers.length) {
      const roles = o.roles.filter((r) => needsOf(r, o.dnsServer).ports.some((p) => p.port === need.port && p.proto === need.proto));
      problems.push(`${need.proto} port ${need.port} (${roles.join(', ')}) is held by ${[...new Set(strangers)].join(', ')}, not by the role's own daemon`);
    }
  }
  return problems;
}
