// The lab's hosts made hosting nodes with `hostplane node setup` and nothing else (decision 0018
// "The lab"): the api host first (it makes the store and prints the --store URL), then web, mail,
// db and ns2 (a Knot secondary) side by side; then the demo dataset, whose domains the lab's DNS serves with their web
// and mail records on the web and mail hosts.
import fs from 'node:fs';
import path from 'node:path';
import { inHost } from './hosts.js';
import { HOSTS, type HostName } from './plan.js';
import { LabError } from './proc.js';

/** Where the lab's CA file is inside every host, and the lab's ACME directory. */
export interface LabAcme {
  directory: string;
  caInHost: string;
}

const address = (h: HostName) => HOSTS.find((x) => x.name === h)!.address;
const fqdn = (h: HostName) => HOSTS.find((x) => x.name === h)!.fqdns[0];

/** The command of a host, as the operator guide's "Several servers" gives it. */
export function setupCommand(h: HostName, acme: LabAcme, store?: string): string[] {
  const roles: Record<HostName, string> = { api: 'api,dns', web: 'web', mail: 'mail', db: 'db', ns2: 'dns' };
  const common = ['hostplane', 'node', 'setup', '--roles', roles[h], '--name', fqdn(h), '--acme-directory', acme.directory, '--acme-ca-root', acme.caInHost];
  if (h === 'api') {
    // The zones name the lab's name server; new domains point at the web and mail hosts.
    // The tests and the bench are many clients behind one address: a higher limit than the default.
    const sets = { DNS_NAMESERVERS: `ns1.lab.test,${fqdn('ns2')}`, DNS_BASE_IPV4: address('web'), DNS_BASE_IPV6: 'off', DNS_BASE_MX: fqdn('mail'), RATE_LIMIT_MAX: '1000' };
    return [...common, ...Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
  }
  return [...common, '--address', address(h), '--store', store!, ...(h === 'ns2' ? ['--dns-server', 'knot'] : [])];
}

async function setUp(h: HostName, leader: number, cmd: string[], log: (line: string) => void): Promise<string> {
  log(`${h}: ${cmd.join(' ')}`);
  const r = await inHost(leader, cmd, { timeoutMs: 15 * 60_000 });
  if (r.code !== 0) throw new LabError(`node setup on ${h} failed (exit ${r.code}):\n${r.stderr.trim().split('\n').slice(-20).join('\n')}`);
  return r.stderr;
}

/** Sets up every host; writes <dir>/demo.json. */
export async function setUpNodes(dir: string, leaders: Record<HostName, number>, acme: LabAcme, log: (line: string) => void): Promise<void> {
  const said = await setUp('api', leaders.api, setupCommand('api', acme), log);
  const store = /--store '([^']+)'/.exec(said)?.[1];
  if (!store) throw new LabError(`node setup on api did not print the --store URL:\n${said}`);
  await Promise.all((['web', 'mail', 'db', 'ns2'] as const).map((h) => setUp(h, leaders[h], setupCommand(h, acme, store), log)));
  const demo = await inHost(leaders.api, ['sh', '-c', 'set -a; . /etc/hostplane/hostplane.env; set +a; hostplane demo --json'], { timeoutMs: 120_000 });
  if (demo.code !== 0) throw new LabError(`hostplane demo on api failed: ${demo.stderr.trim()}`);
  fs.writeFileSync(path.join(dir, 'demo.json'), demo.stdout);
}
