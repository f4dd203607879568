// The lab (decision 0018 "The lab", docs/decisions/0018-nodes-on-debian.md): `hostplane lab up`
// boots five Debian 13 hosts on 198.18.0.0/24 that the client namespace reaches, that install
// Debian packages from the lab repository with no route out, with Pebble and a resolver on the
// bridge address; `lab down` leaves no process, mount, interface, cgroup or namespace behind,
// also after an `up` that failed half way.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inHost } from '../../src/lab/hosts.js';
import { preflight } from '../../src/lab/lab.js';
import { names } from '../../src/lab/plan.js';
import { alive, children, type ProcRef } from '../../src/lab/proc.js';
import type { LabState } from '../../src/lab/state.js';
import { exited, runCli, spawnCli } from '../helpers/cli.js';
import { requirable } from '../helpers/required.js';

const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000 });

/** What of a lab this machine shows: its namespaces, interfaces, mounts and cgroups. */
function traces(dir: string, id: string): string[] {
  const netns = sh('ip', ['netns', 'list']).stdout.split('\n').filter((l) => l.includes(id));
  const links = sh('ip', ['-o', 'link']).stdout.split('\n').filter((l) => l.includes(id));
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').filter((l) => l.includes(dir) || l.includes(id));
  const cgroups = ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified', '/sys/fs/cgroup']
    .filter((r) => fs.existsSync(r))
    .flatMap((r) => fs.readdirSync(r).filter((e) => e.includes(id)).map((e) => path.join(r, e)));
  const propagate = '/run/systemd/nspawn/propagate';
  const nspawnDirs = fs.existsSync(propagate) ? fs.readdirSync(propagate).filter((e) => e.includes(id)) : [];
  return [...nspawnDirs.map((d) => `nspawn ${propagate}/${d}`), ...netns.map((n) => `netns ${n}`), ...links.map((l) => `link ${l}`), ...mounts.map((m) => `mount ${m}`), ...cgroups.map((c) => `cgroup ${c}`)];
}

/** Every process of the lab: those recorded and every process inside the hosts' cgroups. */
function labProcs(state: LabState): ProcRef[] {
  const found: ProcRef[] = Object.values(state.procs);
  const walk = (g: string) => {
    if (!fs.existsSync(g)) return;
    for (const l of fs.readFileSync(path.join(g, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      const stat = fs.readFileSync(`/proc/${l}/stat`, 'utf8');
      found.push({ pid: Number(l), start: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] });
    }
    for (const e of fs.readdirSync(g, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(g, e.name));
  };
  state.cgroups.forEach(walk);
  return found;
}

const readState = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as LabState;
const leaderOf = (state: LabState, host: string) => children(state.procs[host].pid)[0];

const suite = requirable(preflight());

suite('hostplane lab up|down (decision 0018 "The lab")', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-lab-test-'));
  const { id, clientNetns, hostNetns } = names(dir);
  const timings: string[] = [];
  let state: LabState;
  let running: ProcRef[] = [];

  beforeAll(async () => {
    expect(traces(dir, id)).toEqual([]);
    const t0 = Date.now();
    const up = await runCli(['lab', 'up', dir, '--bare'], {});
    timings.push(`lab up ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(up.stderr).toContain('lab up: api 198.18.0.10');
    expect(up.code).toBe(0);
    state = readState(dir);
  }, 900_000);

  afterAll(async () => {
    // A failed test still leaves nothing behind.
    if (fs.existsSync(path.join(dir, 'state.json'))) await runCli(['lab', 'down', dir], {});
    fs.rmSync(dir, { recursive: true, force: true });
    console.log(`lab timings: ${timings.join(', ')}`);
  }, 120_000);

  it('lab.json names the client namespace, the five hosts\' addresses, the ACME directory, its CA file and the resolver', () => {
    const lab = JSON.parse(fs.readFileSync(path.join(dir, 'lab.json'), 'utf8'));
    expect(lab).toMatchObject({
      client_netns: clientNetns,
      hosts: { api: '198.18.0.10', web: '198.18.0.11', mail: '198.18.0.12', db: '198.18.0.13', ns2: '198.18.0.14' },
      ca: path.join(dir, 'ca/lab-root.pem'),
      acme: 'https://198.18.0.1:14000/dir',
      resolver: '198.18.0.1',
    });
  });

  it('Pebble\'s directory answers over HTTPS that lab-root.pem trusts: from the client by address, from a host as acme.lab.test', async () => {
    const ca = path.join(dir, 'ca/lab-root.pem');
    const pem = fs.readFileSync(ca, 'utf8');
    // Pebble's issuing root, then the CA of its HTTPS.
    const certs = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
    expect(certs).toHaveLength(2);
    const subject = (c: string) => spawnSync('openssl', ['x509', '-noout', '-subject'], { input: c, encoding: 'utf8' }).stdout.trim();
    expect(certs.map(subject)).toEqual([expect.stringMatching(/^subject=CN ?= ?Pebble Root CA /), expect.stringMatching(/^subject=CN ?= ?hostplane lab ACME server CA$/)]);
    const fromClient = sh('ip', ['netns', 'exec', clientNetns, 'curl', '-sf', '--max-time', '5', '--cacert', ca, 'https://198.18.0.1:14000/dir']);
    expect(fromClient.status, fromClient.stderr).toBe(0);
    expect(JSON.parse(fromClient.stdout)).toMatchObject({ newAccount: 'https://198.18.0.1:14000/sign-me-up', newNonce: expect.any(String), newOrder: expect.any(String) });
    // Without the file, the client does not trust it.
    expect(sh('ip', ['netns', 'exec', clientNetns, 'curl', '-sf', '--max-time', '5', 'https://198.18.0.1:14000/dir']).status).toBe(60);
    for (const host of ['api', 'db']) {
      const pid = leaderOf(state, host);
      expect((await inHost(pid, ['cat', '/etc/hostplane-lab/lab-root.pem'])).stdout).toBe(pem);
      const r = await inHost(pid, ['curl', '-sf', '--max-time', '5', '--cacert', '/etc/hostplane-lab/lab-root.pem', 'https://acme.lab.test:14000/dir']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ newAccount: 'https://acme.lab.test:14000/sign-me-up' });
    }
  });

  it('the resolver on 198.18.0.1 answers the lab\'s names itself and relays other names to 198.18.0.10, SERVFAIL while nothing answers there', () => {
    const dig = (...args: string[]) => sh('ip', ['netns', 'exec', clientNetns, 'dig', '@198.18.0.1', '+time=5', '+tries=1', ...args]).stdout;
    expect(dig('api.lab.test', 'A', '+short')).toBe('198.18.0.10\n');
    expect(dig('acme.lab.test', 'A', '+short', '+tcp')).toBe('198.18.0.1\n');
    expect(dig('mx1.lab.test', 'A')).toMatch(/status: NOERROR,[^]*flags: qr aa rd ra;/);
    expect(dig('nothing-here.lab.test', 'A')).toMatch(/status: NXDOMAIN,[^]*flags: qr aa rd ra;/);
    // hostplane's DNS on the api host is not set up in this lab: the relay gives up after 2 s.
    const t0 = Date.now();
    expect(dig('example.com', 'A')).toMatch(/status: SERVFAIL,/);
    expect(Date.now() - t0).toBeLessThan(4000);
  });

  it('Pebble issues a certificate for a host\'s name over HTTP-01 on its port 80, chaining to lab-root.pem', () => {
    // This machine's lego, in the api host's network namespace, answers the challenge on port 80.
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-lab-lego-'));
    try {
      const ca = path.join(dir, 'ca/lab-root.pem');
      const lego = spawnSync('ip', ['netns', 'exec', hostNetns('api'), 'lego', '--server', 'https://198.18.0.1:14000/dir', '--accept-tos', '--email', 'lab@lab.test',
        '--path', work, '--domains', 'api.lab.test', '--http', '--http.port', ':80', 'run'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LEGO_CA_CERTIFICATES: ca } });
      expect(lego.status, lego.stderr).toBe(0);
      const crt = path.join(work, 'certificates/api.lab.test.crt');
      const verify = sh('openssl', ['verify', '-CAfile', ca, '-untrusted', path.join(work, 'certificates/api.lab.test.issuer.crt'), crt]);
      expect(verify.stdout, verify.stderr).toBe(`${crt}: OK\n`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 90_000);

  it('a second `lab up` on the same directory is refused and changes nothing', async () => {
    const before = fs.readFileSync(path.join(dir, 'state.json'), 'utf8');
    const r = await runCli(['lab', 'up', dir], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`hostplane: ${dir} already has a running lab`);
    expect(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')).toBe(before);
  });

  it('every host runs systemd and answers the client by its lab name over the bridge', async () => {
    const expected = { api: 'api.lab.test', web: 'web1.lab.test', mail: 'mx1.lab.test', db: 'db1.lab.test' };
    for (const [host, fqdn] of Object.entries(expected)) {
      const pid = leaderOf(state, host);
      expect((await inHost(pid, ['systemctl', 'is-system-running'])).stdout.trim()).toMatch(/^(running|degraded)$/);
      // Each host's systemd has cgroups of its own: no host's unit stops kill another host's processes.
      const groups = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').filter((l) => /^\d+:(name=systemd)?:/.test(l));
      expect(groups.length).toBeGreaterThan(0);
      for (const g of groups) expect(g).toMatch(new RegExp(`:/hpl-${id}-${host}/`));
      // A one-line HTTP server inside the host (the host's own node), answering with its hostname.
      const server = `require('http').createServer((q, s) => s.end(require('os').hostname())).listen(8080, '0.0.0.0')`;
      const started = await inHost(pid, ['systemd-run', '--unit=hpl-hello', 'node', '-e', server]);
      expect(started.code, started.stderr).toBe(0);
      const address = JSON.parse(fs.readFileSync(path.join(dir, 'lab.json'), 'utf8')).hosts[host];
      let answer = '';
      for (let i = 0; i < 50 && answer !== fqdn; i++) {
        answer = sh('ip', ['netns', 'exec', clientNetns, 'curl', '-s', '--max-time', '2', `http://${address}:8080/`]).stdout;
        if (answer !== fqdn) await new Promise((r) => setTimeout(r, 200));
      }
      expect(answer, host).toBe(fqdn);
      // This checkout's hostplane, installed beside its dependencies, runs on the host's own Node.
      const help = await inHost(pid, ['hostplane', '--help'], { timeoutMs: 60_000 });
      expect({ code: help.code, stderr: help.stderr }, host).toEqual({ code: 0, stderr: '' });
      expect(help.stdout).toMatch(/^Usage: hostplane /);
    }
  }, 120_000);

  it('hostplane\'s native addons load on the hosts: SQLite (better-sqlite3) and the UDP batch reader', async () => {
    const pid = leaderOf(state, 'db');
    const migrate = await inHost(pid, ['sh', '-c', 'DATABASE_URL=/tmp/lab-test.db hostplane migrate'], { timeoutMs: 60_000 });
    expect(migrate.stdout).toMatch(/^Applied to \/tmp\/lab-test\.db: 001-foundation, /);
    expect(migrate.code).toBe(0);
    const addon = '/usr/local/lib/node_modules/hostplane/native/udp-batch/build/Release/udp_batch.node';
    const load = await inHost(pid, ['node', '-e', `const m = { exports: {} }; process.dlopen(m, '${addon}'); console.log(typeof m.exports.open)`]);
    expect(load.stdout.trim(), load.stderr).toBe('function');
  }, 120_000);

  it('the web host installs caddy from the lab repository, its only source, with no route out', async () => {
    const pid = leaderOf(state, 'web');
    const sources = await inHost(pid, ['sh', '-c', 'cat /etc/apt/sources.list /etc/apt/sources.list.d/* /etc/apt/sources.list.d/.* 2>/dev/null']);
    expect(sources.stdout).toBe('deb [trusted=yes] http://198.18.0.1:8000/ ./\n');
    const veth = `hpl${id}`;
    expect(sh('ip', ['-n', hostNetns('web'), 'route']).stdout).toBe(
      `default via 198.18.0.1 dev ${veth} \n198.18.0.0/24 dev ${veth} proto kernel scope link src 198.18.0.11 \n`,
    );
    // This machine reaches Debian's mirror; the host's namespace does not, by name or by address.
    expect(sh('curl', ['-sf', '-o', '/dev/null', '--max-time', '20', 'http://deb.debian.org/debian/']).status).toBe(0);
    const mirrorIp = sh('getent', ['ahostsv4', 'deb.debian.org']).stdout.split(/\s+/)[0];
    expect(mirrorIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const url of ['http://deb.debian.org/debian/', `http://${mirrorIp}/debian/`]) {
      expect(sh('ip', ['netns', 'exec', hostNetns('web'), 'curl', '-sf', '-o', '/dev/null', '--max-time', '3', url]).status, url).not.toBe(0);
      expect((await inHost(pid, ['curl', '-sf', '-o', '/dev/null', '--max-time', '3', url])).code, url).not.toBe(0);
    }
    const t0 = Date.now();
    const install = await inHost(pid, ['sh', '-c', 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q caddy'], { timeoutMs: 300_000 });
    timings.push(`apt-get install caddy ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toContain('http://198.18.0.1:8000 ./ Packages');
    expect(install.stdout).toMatch(/Setting up caddy /);
    // Debian's unit started it: the client reaches the host's Caddy on port 80.
    let status = '';
    for (let i = 0; i < 50 && status !== '200'; i++) {
      status = sh('ip', ['netns', 'exec', clientNetns, 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '2', 'http://198.18.0.11/']).stdout;
      if (status !== '200') await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe('200');
  }, 400_000);

  it('lab down stops every process, unmounts, deletes every namespace and interface, and says so', async () => {
    expect(traces(dir, id).length).toBeGreaterThan(0);
    running = labProcs(state);
    expect(running.length).toBeGreaterThan(10);
    const t0 = Date.now();
    const down = await runCli(['lab', 'down', dir], {});
    timings.push(`lab down ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(down.stderr).toBe('');
    expect(down.code).toBe(0);
    for (const h of ['api', 'web', 'mail', 'db', 'ns2']) expect(down.stdout).toContain(`stopped host ${h} (systemd-nspawn pid ${state.procs[h].pid})`);
    expect(down.stdout).toContain(`stopped Pebble (pid ${state.procs.pebble.pid})`);
    expect(down.stdout).toContain(`stopped the resolver (pid ${state.procs.resolver.pid})`);
    expect(down.stdout).toContain(`stopped the repository server (pid ${state.procs['repo-server'].pid})`);
    expect(down.stdout).toContain(`deleted network namespace ${clientNetns} and its interfaces`);
    expect(down.stdout).toContain(`unmounted ${dir}/hosts/web/root`);
    expect(running.filter(alive)).toEqual([]);
    expect(traces(dir, id)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
    const again = await runCli(['lab', 'down', dir], {});
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: `hostplane: no lab in ${dir} (no state.json there)\n` });
  }, 120_000);

  it('lab down cleans up after a lab up killed half way', async () => {
    const half = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-lab-test-'));
    const halfId = names(half).id;
    try {
      // `lab up` as a process of its own, killed once it has started the hosts' containers.
      const up = spawnCli(['lab', 'up', half, '--bare'], {});
      const ended = exited(up);
      // The bridge's three services and the five hosts' containers.
      const all = ['api', 'db', 'mail', 'ns2', 'pebble', 'repo-server', 'resolver', 'web'];
      let made: LabState | null = null;
      // Up to six minutes: the hosts' containers start slowly beside other test files (a slow
      // machine under a full CI run took more than three).
      for (let i = 0; i < 3600 && Object.keys(made?.procs ?? {}).length < all.length; i++) {
        await new Promise((r) => setTimeout(r, 100));
        made = fs.existsSync(path.join(half, 'state.json')) ? readState(half) : null;
      }
      up.kill('SIGKILL');
      await ended;
      expect(Object.keys(made!.procs).sort()).toEqual(all);
      expect(fs.existsSync(path.join(half, 'lab.json'))).toBe(false);
      expect(traces(half, halfId).length).toBeGreaterThan(0);
      const procs = labProcs(readState(half));
      const down = await runCli(['lab', 'down', half], {});
      expect(down.code, down.stderr).toBe(0);
      expect(procs.filter(alive)).toEqual([]);
      expect(traces(half, halfId)).toEqual([]);
      // Also what nspawn leaves in /run when it is killed before its container has booted.
      expect(made!.paths.filter((p) => p.startsWith('/run/') && fs.existsSync(p))).toEqual([]);
    } finally {
      if (fs.existsSync(path.join(half, 'state.json'))) await runCli(['lab', 'down', half], {});
      fs.rmSync(half, { recursive: true, force: true });
    }
  }, 540_000);

  it('without root, lab up says so and creates nothing', () => {
    const dir2 = path.join(os.tmpdir(), `hp-lab-test-nobody-${process.pid}`);
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', 'src/main.ts', 'lab', 'up', dir2], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      encoding: 'utf8',
    });
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 1, stderr: 'hostplane: the lab needs root (network namespaces, mounts, systemd-nspawn): run it with sudo\n' });
    expect(fs.existsSync(dir2)).toBe(false);
  });
});
