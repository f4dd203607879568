// The lab's hosts made hosting nodes with `hostplane node setup` and nothing else (decision 0018
// "The lab"). A company: the api host first (it makes the store and prints the --store URL), then
// web, mail, db and ns2 (a Knot secondary) side by side. One server: every role at once. Then the
// demo dataset, whose domains the lab's DNS serves with their web and mail records on the hosts
// that serve them.
import fs from 'node:fs';
import path from 'node:path';
import { inHost } from './hosts.js';
import { hostsOf, type HostName, type Shape } from './plan.js';
import { LabError } from './proc.js';

/** Where the lab's CA file is inside every host, and the lab's ACME directory. */
export interface LabAcme {
  directory: string;
  caInHost: string;
}

const COMPANY = hostsOf('company');
const address = (h: HostName) => COMPANY.find((x) => x.name === h)!.address;
const fqdn = (h: HostName) => COMPANY.find((x) => x.name === h)!.fqdns[0];
const ROLES: Partial<Record<HostName, string>> = { api: 'api,dns', web: 'web', mail: 'mail', db: 'db', ns2: 'dns', host: 'api,dns,web,mail,db' };

/** `--set` words of the host that runs the API: the zones' name servers and where new domains point. */
function apiSets(h: HostName): string[] {
  const one = h === 'host' ? hostsOf('one-server')[0] : null;
  const sets = {
    DNS_NAMESERVERS: one ? one.fqdns[0] : `ns1.lab.test,${fqdn('ns2')}`,
    DNS_BASE_IPV4: one ? one.address : address('web'),
    DNS_BASE_IPV6: 'off',
    DNS_BASE_MX: one ? one.fqdns[0] : fqdn('mail'),
    // The tests and the bench are many clients behind one address: a higher limit than the default.
    RATE_LIMIT_MAX: '1000',
  };
  return Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}

/** The command of a host, as the operator guide's "One Debian 13 server" and "Several servers" give it. */
export function setupCommand(h: HostName, acme: LabAcme, store?: string): string[] {
  const name = h === 'host' ? hostsOf('one-server')[0].fqdns[0] : fqdn(h);
  const common = ['hostplane', 'node', 'setup', '--roles', ROLES[h]!, '--name', name, '--acme-directory', acme.directory, '--acme-ca-root', acme.caInHost];
  if (h === 'api' || h === 'host') return [...common, ...apiSets(h)];
  return [...common, '--address', address(h), '--store', store!, ...(h === 'ns2' ? ['--dns-server', 'knot'] : [])];
}

async function setUp(h: HostName, leader: number, cmd: string[], log: (line: string) => void): Promise<string> {
  log(`${h}: ${cmd.join(' ')}`);
  const r = await inHost(leader, cmd, { timeoutMs: 15 * 60_000 });
  if (r.code !== 0) throw new LabError(`node setup on ${h} failed (exit ${r.code}):\n${r.stderr.trim().split('\n').slice(-20).join('\n')}`);
  return r.stderr;
}

/** Sets up every host of `shape`; writes <dir>/demo.json. */
export async function setUpNodes(dir: string, shape: Shape, leaders: Partial<Record<HostName, number>>, acme: LabAcme, log: (line: string) => void): Promise<void> {
  const first = shape === 'one-server' ? 'host' : 'api';
  const said = await setUp(first, leaders[first]!, setupCommand(first, acme), log);
  if (shape === 'company') {
    const store = /--store '([^']+)'/.exec(said)?.[1];
    if (!store) throw new LabError(`node setup on api did not print the --store URL:\n${said}`);
    await Promise.all((['web', 'mail', 'db', 'ns2'] as const).map((h) => setUp(h, leaders[h]!, setupCommand(h, acme, store), log)));
  }
  const demo = await inHost(leaders[first]!, ['sh', '-c', 'set -a; . /etc/hostplane/hostplane.env; set +a; hostplane demo --json'], { timeoutMs: 120_000 });
  if (demo.code !== 0) throw new LabError(`hostplane demo on ${first} failed: ${demo.stderr.trim()}`);
  fs.writeFileSync(path.join(dir, 'demo.json'), demo.stdout);
}
