// What `hostplane node setup` refuses before it changes anything (docs/decisions/0018-nodes-on-debian.md
// "One command per node"): another OS or release, no root, a bad name or store, and a port a role
// needs held by a program that is not the role's own. Every problem is listed at once.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseRoles, portsOf } from '../../src/node/roles.js';
import { preflightProblems, readHost, type HostFacts } from '../../src/node/preflight.js';

const TRIXIE = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nID=debian\n';
const host = (over: Partial<HostFacts> = {}): HostFacts => ({ osRelease: TRIXIE, uid: 0, listening: [], addresses: ['192.0.2.10'], ...over });

describe('node setup preflight', () => {
  it('a Debian 13 host run as root with free ports and the right options: nothing to say', () => {
    expect(preflightProblems(host(), { roles: ['api', 'dns'], name: 'api.example.net' })).toEqual([]);
    expect(preflightProblems(host(), { roles: ['web'], name: 'web1.example.net', store: 'postgres://hp:pw@api.example.net/hostplane' })).toEqual([]);
  });

  it('this machine (Debian 12) as it is: the release is named and the setup refused', async () => {
    const facts = await readHost();
    const problems = preflightProblems(facts, { roles: ['db'], name: 'db1.example.net', store: 'postgres://x@y/z' });
    expect(problems[0]).toMatch(/^this is Debian GNU\/Linux 12 \(bookworm\): hostplane node setup runs on Debian 13 \(trixie\)$/);
  });

  it('another system, no root, a bad name and no store: every problem at once', () => {
    const problems = preflightProblems(host({ osRelease: 'PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nVERSION_ID="24.04"\n', uid: 1000 }), { roles: ['web', 'mail'], name: 'web1' });
    expect(problems).toEqual([
      'this is Ubuntu 24.04 LTS: hostplane node setup runs on Debian 13 (trixie)',
      'it must run as root (it installs packages and writes /etc)',
      '--name "web1" is not the host\'s full domain name (e.g. web1.example.net)',
      "--store is required without the api role: the postgres://… URL the api node printed",
    ]);
    expect(preflightProblems(host({ osRelease: '' }), { roles: ['dns'], name: 'ns2.example.net', store: 'postgres://x@y/z' })).toEqual([
      'this is an unknown system (no /etc/os-release): hostplane node setup runs on Debian 13 (trixie)',
    ]);
    // The dns role alone reads its zones from the store, or (Knot) registers itself there.
    expect(preflightProblems(host(), { roles: ['dns'], name: 'ns2.example.net' })).toEqual([
      "--store is required without the api role: the postgres://… URL the api node printed",
    ]);
    expect(preflightProblems(host(), { roles: ['db'], name: 'db1.example.net', store: 'mysql://root@x/y' })).toEqual([
      "--store must be a postgres:// URL (nodes share the api node's PostgreSQL)",
    ]);
  });

  it("a port held by another program stops it; the role's own daemon (an earlier run) does not", () => {
    const listening = [
      { proto: 'tcp' as const, port: 80, programs: ['nginx'] },
      { proto: 'tcp' as const, port: 443, programs: ['caddy'] },
      { proto: 'tcp' as const, port: 25, programs: ['master', 'smtpd'] },
      { proto: 'udp' as const, port: 53, programs: ['systemd-resolve'] },
    ];
    expect(preflightProblems(host({ listening }), { roles: ['api', 'dns', 'mail'], name: 'api.example.net' })).toEqual([
      'tcp port 80 (api, mail) is held by nginx, not by the role\'s own daemon',
      'udp port 53 (dns) is held by systemd-resolve, not by the role\'s own daemon',
    ]);
  });

  it('a Knot secondary: only as the dns role, not beside the api role, with a primary that is an address; port 53 may be knotd\'s', () => {
    const store = 'postgres://hp@api.example.net/hostplane';
    expect(preflightProblems(host(), { roles: ['dns'], name: 'ns2.example.net', store, dnsServer: 'knot' })).toEqual([]);
    expect(preflightProblems(host(), { roles: ['dns'], name: 'ns2.example.net', store, dnsServer: 'knot', dnsPrimary: '[2001:db8::53]:5353' })).toEqual([]);
    expect(preflightProblems(host(), { roles: ['api', 'web'], name: 'api.example.net', dnsServer: 'knot', dnsPrimary: 'ns1.example.net' })).toEqual([
      '--dns-server is the server of the dns role: give --roles dns too',
      "--dns-server knot follows hostplane's DNS server of another host: not with the api role",
      '--dns-primary "ns1.example.net": not an IP address, with an optional port (192.0.2.10 or 192.0.2.10:53)',
    ]);
    expect(preflightProblems(host(), { roles: ['dns'], name: 'ns2.example.net', store, dnsPrimary: '192.0.2.10' })).toEqual(['--dns-primary "192.0.2.10": only with --dns-server knot']);
    const listening = [
      { proto: 'udp' as const, port: 53, programs: ['knotd'] },
      { proto: 'tcp' as const, port: 53, programs: ['node'] },
    ];
    expect(preflightProblems(host({ listening }), { roles: ['dns'], name: 'ns2.example.net', store, dnsServer: 'knot' })).toEqual([
      "tcp port 53 (dns) is held by node, not by the role's own daemon",
    ]);
  });

  it('reads the real listeners of this host: a port this test holds shows as held by node', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const facts = await readHost();
      expect(facts.listening).toContainEqual({ proto: 'tcp', port, programs: ['node'] });
    } finally {
      server.close();
    }
  });

  it('roles: parsed in their order, unknown words named; ports merged across roles', () => {
    expect(parseRoles('web, api,dns')).toEqual({ roles: ['api', 'dns', 'web'] });
    expect(parseRoles('web,smtp,ftp')).toEqual({ unknown: ['smtp', 'ftp'] });
    expect(parseRoles('')).toEqual({ unknown: [''] });
    expect(portsOf(['api', 'web']).filter((p) => p.port === 443)).toEqual([{ port: 443, proto: 'tcp', ours: ['caddy'] }]);
  });
});
