// sshd's SFTP rules (docs/decisions/0023-sftp.md): the drop-in node setup places matches only the
// group hostplane-sftp and holds every rule (chroot, internal-sftp, the keys hostplane writes, keys
// only, no forwarding, VERBOSE logins); Debian's sshd accepts it (`sshd -t`) together with a main
// config, and `sshd -T` shows the rules apply to a package user and not to the operator's root. The
// node's check refuses a drop-in sshd refuses; the local stack's own config passes too. sshd runs
// in a private mount namespace with a tmpfs on /run (its /run/sshd), so nothing of the machine's
// changes. Needs /usr/sbin/sshd and unshare.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateSshdConfig, sftpDropIn, sftpMatchBlock } from '../../src/node/render/sshd.js';
import { requirable } from '../helpers/required.js';

const SSHD = '/usr/sbin/sshd';

function sshdMissing(): string | null {
  if (spawnSync('test', ['-x', SSHD]).status !== 0) return `${SSHD} is not installed (Debian: openssh-server)`;
  if (process.getuid?.() !== 0) return 'sshd -t runs here in a mount namespace of its own, which needs root';
  return null;
}

/**
 * `sshd <args>` in a namespace where /run is a fresh tmpfs holding /run/sshd and, with `users`,
 * copies of passwd and group in that dir are /etc's (as the local stack's sshd sees its users).
 */
function sshdIn(args: string[], users?: string): { status: number | null; stdout: string; stderr: string } {
  const binds = users ? ` && mount --bind ${users}/passwd /etc/passwd && mount --bind ${users}/group /etc/group` : '';
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', `mount -t tmpfs -o mode=0755 t /run && mkdir /run/sshd${binds} && exec "$0" "$@"`, SSHD, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const FACTS = { chrootRoot: '/srv/www', stateDir: '/srv/www/.hostplane' };

describe('the SFTP drop-in as rendered', () => {
  it('matches only the group hostplane-sftp and holds every rule', () => {
    expect(sftpMatchBlock(FACTS)).toBe(`Match Group hostplane-sftp
	ChrootDirectory /srv/www/%u
	ForceCommand internal-sftp
	AuthorizedKeysFile /srv/www/.hostplane/ssh/authorized_keys/%u
	AuthorizedKeysCommand none
	AuthorizedPrincipalsFile none
	AuthenticationMethods publickey
	PubkeyAuthentication yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	HostbasedAuthentication no
	DisableForwarding yes
	AllowTcpForwarding no
	AllowAgentForwarding no
	AllowStreamLocalForwarding no
	X11Forwarding no
	PermitTunnel no
	PermitListen none
	PermitOpen none
	PermitTTY no
	PermitUserRC no
	GatewayPorts no
	LogLevel VERBOSE
`);
    const dropIn = sftpDropIn(FACTS);
    expect(dropIn.startsWith('# Written by hostplane node setup (role web)')).toBe(true);
    expect(dropIn.endsWith(sftpMatchBlock(FACTS))).toBe(true);
    // Nothing before the Match applies to every login: only comments.
    expect(dropIn.slice(0, dropIn.indexOf('Match ')).split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([]);
  });

  it('refuses paths sshd_config would read otherwise (spaces, quotes, %, relative)', () => {
    for (const bad of ['srv/www', '/srv/my www', '/srv/"www', '/srv/%h', '/srv/www\nMatch all']) {
      expect(() => sftpDropIn({ ...FACTS, chrootRoot: bad })).toThrow(`chrootRoot "${bad}" must be an absolute path of letters, digits and . _ + @ - /`);
      expect(() => sftpDropIn({ ...FACTS, stateDir: bad })).toThrow(`stateDir "${bad}" must be an absolute path`);
    }
    expect(() => privateSshdConfig({ ...FACTS, listen: '0.0.0.0:22', hostKey: '/k', pidFile: '/p' })).toThrow('listen "0.0.0.0:22" must be a loopback address and port');
  });
});

requirable(sshdMissing())("Debian's sshd and the SFTP rules", () => {
  let dir: string;
  let hostKey: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sshd-render-'));
    hostKey = path.join(dir, 'host_key');
    expect(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]).status).toBe(0);
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** A main config as Debian's starts: the drop-in included first, then the operator's own settings. */
  const mainWith = async (dropIn: string) => {
    const file = path.join(dir, 'hostplane-sftp.conf');
    await fs.writeFile(file, dropIn);
    const main = path.join(dir, 'sshd_config');
    await fs.writeFile(main, `Include ${file}\nHostKey ${hostKey}\nPermitRootLogin prohibit-password\nPasswordAuthentication yes\nSubsystem sftp /usr/lib/openssh/sftp-server\n`);
    return main;
  };

  it('sshd -t accepts the drop-in in a Debian-like main config; sshd -T applies it to a package user only', async () => {
    const main = await mainWith(sftpDropIn(FACTS));
    expect(sshdIn(['-t', '-f', main])).toEqual({ status: 0, stdout: '', stderr: '' });

    // A package user in the group, in copies of this machine's files.
    const users = path.join(dir, 'users');
    await fs.mkdir(users);
    await fs.writeFile(path.join(users, 'passwd'), `${await fs.readFile('/etc/passwd', 'utf8')}web_p1:x:2000001:2000001::/srv/www/web_p1:/usr/sbin/nologin\n`);
    await fs.writeFile(path.join(users, 'group'), `${await fs.readFile('/etc/group', 'utf8')}hostplane-sftp:x:2000000:web_p1\nweb_p1:x:2000001:\n`);
    const settings = (conn: string) => {
      const r = sshdIn(['-T', '-f', main, '-C', conn], users);
      expect(r.status, r.stderr).toBe(0);
      return Object.fromEntries(r.stdout.split('\n').filter(Boolean).map((l) => [l.split(' ')[0], l.slice(l.indexOf(' ') + 1)]));
    };
    // -C names the user; its groups come from this machine, where root is in none of hostplane's.
    const root = settings('user=root,host=admin.example,addr=192.0.2.1');
    expect({ chroot: root.chrootdirectory, force: root.forcecommand, password: root.passwordauthentication, tcp: root.allowtcpforwarding, log: root.loglevel })
      .toEqual({ chroot: 'none', force: 'none', password: 'yes', tcp: 'yes', log: 'INFO' });
    const pkg = settings('user=web_p1,host=client.example,addr=192.0.2.2');
    expect({
      chroot: pkg.chrootdirectory, force: pkg.forcecommand, keys: pkg.authorizedkeysfile, methods: pkg.authenticationmethods, password: pkg.passwordauthentication,
      tcp: pkg.allowtcpforwarding, agent: pkg.allowagentforwarding, x11: pkg.x11forwarding, tunnel: pkg.permittunnel, tty: pkg.permittty, log: pkg.loglevel,
    }).toEqual({
      chroot: '/srv/www/%u', force: 'internal-sftp', keys: '/srv/www/.hostplane/ssh/authorized_keys/%u', methods: 'publickey', password: 'no',
      tcp: 'no', agent: 'no', x11: 'no', tunnel: 'no', tty: 'no', log: 'VERBOSE',
    });
  });

  it("a drop-in sshd refuses is refused by the node's check, naming sshd's words; a good one passes", async () => {
    const { sshdCheck } = await import('../../src/node/sftp.js');
    const good = path.join(dir, 'good.conf');
    await fs.writeFile(good, sftpDropIn(FACTS));
    const main = path.join(dir, 'main_config');
    await fs.writeFile(main, `HostKey ${hostKey}\n`);
    const inNamespace = path.join(dir, 'sshd-in-namespace');
    // sshd runs in a namespace with /run/sshd of its own: the check makes none on this machine.
    await fs.writeFile(inNamespace, `#!/bin/sh\nexec unshare --mount --propagation private -- /bin/sh -c 'mount -t tmpfs -o mode=0755 t /run && mkdir /run/sshd && exec ${SSHD} "$@"' sh "$@"\n`, { mode: 0o755 });
    await expect(sshdCheck(main, inNamespace, { privsepDir: null })(good)).resolves.toBeUndefined();
    const bad = path.join(dir, 'bad.conf');
    await fs.writeFile(bad, `${sftpDropIn(FACTS)}\tNoSuchOption yes\n`);
    await expect(sshdCheck(main, inNamespace, { privsepDir: null })(bad)).rejects.toThrow(/Bad configuration option: NoSuchOption/);
  });

  it("the local stack's own config passes sshd -t", async () => {
    const conf = path.join(dir, 'stack_sshd_config');
    await fs.writeFile(conf, privateSshdConfig({ listen: '127.0.0.1:2222', hostKey, pidFile: path.join(dir, 'sshd.pid'), chrootRoot: '/run/hostplane-sftp/www', stateDir: path.join(dir, 'web') }));
    expect(sshdIn(['-t', '-f', conf])).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
