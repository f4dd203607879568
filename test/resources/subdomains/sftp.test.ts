// SFTP into a package's home on the local stack (docs/decisions/0023-sftp.md): real sftp and ssh
// clients in batch mode with a key made by ssh-keygen. A key written with writeAuthorizedKeys logs
// in, and no longer once removed; the chroot holds (`cd ..`, a symlink pointing out), there is no
// shell and no forwarding; an uploaded index.php is served by the package's site as the package's
// user and belongs to it; another package reads it neither through SFTP nor through its PHP nor
// as its Linux user; sshd's log tells each login with the key's fingerprint (the follower the web
// worker runs). End to end: a key POSTed to /ssh-keys (API guide "SSH keys") logs in at the
// package's sftp_host, sftp_port and sftp_user once its job is done, and the login shows as its
// last_used_at.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caddyWebDriver } from '../../../src/provisioning/web/driver.js';
import { authorizedKeysPath, writeAuthorizedKeys } from '../../../src/provisioning/web/ssh-keys.js';
import { followSshdLog, sshKeyFingerprint, type SshKeyUse } from '../../../src/provisioning/web/sshd-log.js';
import { startSftpLogins } from '../../../src/resources/ssh-keys/ssh-keys.logins.js';
import { ENGINES, call } from '../../helpers/app.js';
import { jobDone } from '../../helpers/jobs.js';
import { requirable } from '../../helpers/required.js';
import { newKey, sftpBatch, sftpServerMissing, ssh, type ClientKey } from '../../helpers/sftp.js';
import { postSshKey } from '../../helpers/ssh-keys-suite.js';
import { stackMissing } from '../../helpers/stack.js';
import { PHP_VERSION, browse, postSubdomain, useSubdomainsSuite } from '../../helpers/subdomains.js';
import { freePort } from '../../helpers/ports.js';
import { pollUntil } from '../../helpers/wait.js';

requirable(stackMissing() ?? sftpServerMissing())('SFTP into a package\'s home on the local stack', () => {
  describe.each(ENGINES)('on %s', { timeout: 90_000 }, (engine) => {
    const s = useSubdomainsSuite(engine, { sftp: true });
    const web = caddyWebDriver({ askUrl: null, tls: 'internal' });
    let keys: string;
    let a: { token: string; domain: string; linuxUser: string; home: string };
    let b: typeof a;
    let keyA: ClientKey;
    let keyB: ClientKey;
    const uses: SshKeyUse[] = [];
    let stopFollowing: (() => Promise<void>) | null = null;
    const server = () => ({ ...s.sftp!, known_hosts: s.sftp!.known_hosts });

    /** A webspace with PHP at /htdocs/site/ of `c`, its job done: its host. */
    const site = async (c: typeof a, sub: string) => {
      const r = await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: sub, webspace: { path: '/htdocs/site/', php_version: PHP_VERSION } });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, c.token, r);
      return `${sub}.${c.domain}`;
    };
    const ids = async (user: string) => {
      const line = (await fs.readFile(path.join(s.web.stateDir, 'users/passwd'), 'utf8')).split('\n').find((l) => l.startsWith(`${user}:`))!;
      return { uid: Number(line.split(':')[2]), gid: Number(line.split(':')[3]) };
    };

    beforeAll(async () => {
      keys = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sftp-keys-'));
      keyA = await newKey(keys, 'a');
      keyB = await newKey(keys, 'b');
      a = await s.customer();
      b = await s.customer();
      stopFollowing = followSshdLog(s.sftp!.log, (u) => void uses.push(u));
    }, 60_000);
    afterAll(async () => {
      await stopFollowing?.();
      await web.close();
      if (keys) await fs.rm(keys, { recursive: true, force: true });
    });

    it('a key written with writeAuthorizedKeys logs in over SFTP into the home (a root-owned chroot); removed, it no longer does', async () => {
      await web.setSshKeys(s.web, a.linuxUser, [keyA.pub]);
      const file = authorizedKeysPath(s.web, a.linuxUser);
      expect(file).toBe(`${s.web.stateDir}/ssh/authorized_keys/${a.linuxUser}`);
      const st = await fs.stat(file);
      expect({ uid: st.uid, gid: st.gid, mode: st.mode & 0o7777, text: await fs.readFile(file, 'utf8') }).toEqual({ uid: 0, gid: 0, mode: 0o644, text: `${keyA.pub}\n` });
      const home = await fs.stat(a.home);
      expect({ uid: home.uid, gid: home.gid, mode: home.mode & 0o7777 }).toEqual({ uid: 0, gid: (await ids(a.linuxUser)).gid, mode: 0o751 });

      const ok = await sftpBatch(server(), a.linuxUser, keyA, ['pwd']);
      expect(ok, ok.stderr).toMatchObject({ code: 0, stdout: 'sftp> pwd\nRemote working directory: /\n' });
      // The other package's key is not one of a's.
      const wrong = await sftpBatch(server(), a.linuxUser, keyB, ['pwd']);
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toContain('Permission denied (publickey)');

      await writeAuthorizedKeys(s.web, a.linuxUser, []);
      const removed = await sftpBatch(server(), a.linuxUser, keyA, ['pwd']);
      expect(removed.code).not.toBe(0);
      expect(removed.stderr).toContain('Permission denied (publickey)');
      await writeAuthorizedKeys(s.web, a.linuxUser, [keyA.pub]);
      expect((await sftpBatch(server(), a.linuxUser, keyA, ['pwd'])).code).toBe(0);
      // A line that is not a plain public key (options, two lines) is refused and nothing changes.
      for (const bad of [`command="/bin/sh" ${keyB.pub}`, `${keyB.pub}\n${keyB.pub}`, 'not a key']) {
        await expect(writeAuthorizedKeys(s.web, a.linuxUser, [bad])).rejects.toThrow(`key 1 of ${a.linuxUser} is not a one-line OpenSSH public key without options`);
      }
      expect(await fs.readFile(file, 'utf8')).toBe(`${keyA.pub}\n`);
    });

    it("an uploaded index.php is served by the package's site, runs as the package's user and belongs to it", async () => {
      const host = await site(a, 'up');
      const local = path.join(keys, 'index.php');
      await fs.writeFile(local, '<?php echo json_encode(["euid" => posix_geteuid(), "egid" => posix_getegid()]);');
      const put = await sftpBatch(server(), a.linuxUser, keyA, [`put ${local} /htdocs/site/index.php`, 'ls -n /htdocs/site']);
      expect(put, put.stderr).toMatchObject({ code: 0 });
      const me = await ids(a.linuxUser);
      const st = await fs.stat(path.join(a.home, 'htdocs/site/index.php'));
      expect({ uid: st.uid, gid: st.gid }).toEqual(me);
      const dir = await fs.stat(path.join(a.home, 'htdocs/site'));
      expect({ uid: dir.uid, gid: dir.gid, mode: dir.mode & 0o7777 }).toEqual({ ...me, mode: 0o2750 });

      const got = await browse(s.web, host, '/');
      expect(got.status, got.body).toBe(200);
      expect(JSON.parse(got.body)).toEqual({ euid: me.uid, egid: me.gid });
      const tls = await browse(s.web, host, '/index.php', { https: true });
      expect({ status: tls.status, body: JSON.parse(tls.body) }).toEqual({ status: 200, body: { euid: me.uid, egid: me.gid } });
    });

    it('the chroot holds: `cd ..` stays in the home, a symlink pointing out leads nowhere, nothing above is writable', async () => {
      await fs.symlink('/etc', path.join(a.home, 'htdocs/etc-link'));
      await fs.symlink('../../..', path.join(a.home, 'htdocs/up-link'));
      const r = await sftpBatch(server(), a.linuxUser, keyA, ['cd ..', 'pwd', 'cd /htdocs/up-link', 'pwd', 'ls -1']);
      expect(r, r.stderr).toMatchObject({ code: 0 });
      // sftp-server resolves the link inside the chroot: three levels up from /htdocs is its /.
      expect(r.stdout).toBe('sftp> cd ..\nsftp> pwd\nRemote working directory: /\nsftp> cd /htdocs/up-link\nsftp> pwd\nRemote working directory: /\nsftp> ls -1\nhtdocs\n');
      // /etc of the chroot does not exist: the link leads to nothing of the machine's.
      const out = await sftpBatch(server(), a.linuxUser, keyA, ['get /htdocs/etc-link/passwd ' + path.join(keys, 'stolen')]);
      expect(out.code).not.toBe(0);
      expect(out.stderr).toMatch(/not found|No such file/);
      await expect(fs.stat(path.join(keys, 'stolen'))).rejects.toThrow();
      // A link the user makes itself resolves inside the chroot too; the home itself is root's.
      const made = await sftpBatch(server(), a.linuxUser, keyA, ['symlink /etc/passwd /htdocs/pw', `get /htdocs/pw ${path.join(keys, 'stolen')}`]);
      expect(made.code).not.toBe(0);
      await expect(fs.stat(path.join(keys, 'stolen'))).rejects.toThrow();
      const mkdir = await sftpBatch(server(), a.linuxUser, keyA, ['mkdir /top']);
      expect(mkdir.code).not.toBe(0);
      expect(mkdir.stderr).toContain('Permission denied');
    });

    it('no shell, no command, no forwarding (-W, -L)', async () => {
      const id = await ssh(server(), a.linuxUser, keyA, [], ['id']);
      expect(id).toMatchObject({ code: 1, stdout: 'This service allows sftp connections only.\n' });
      const w = await ssh(server(), a.linuxUser, keyA, ['-W', s.web.httpListen]);
      expect(w.code).toBe(255);
      expect(w.stderr).toContain('stdio forwarding failed');

      // -L: the tunnel's listener is the client's own; what goes into it is refused by sshd.
      const port = await freePort();
      const tunnel = ssh(server(), a.linuxUser, keyA, ['-N', '-L', `127.0.0.1:${port}:${s.web.httpListen}`]);
      try {
        await pollUntil(() => new Promise<boolean>((resolve) => {
          const c = net.connect(port, '127.0.0.1', () => { c.destroy(); resolve(true); }).on('error', () => resolve(false));
        }), (up) => up, 'the tunnel to listen');
        const answer = await new Promise<string>((resolve) => {
          let got = '';
          const c = net.connect(port, '127.0.0.1', () => c.write('GET / HTTP/1.0\r\nHost: x\r\n\r\n'));
          c.on('data', (d) => (got += d));
          c.on('close', () => resolve(got));
          c.on('error', () => resolve(got));
        });
        expect(answer).toBe('');
      } finally {
        tunnel.child.kill('SIGTERM');
      }
      const run = await tunnel;
      expect(run.stderr).toContain('administratively prohibited');
    });

    it('another package reads none of it: not through SFTP (its own chroot), not through its PHP, not as its Linux user', async () => {
      await web.setSshKeys(s.web, b.linuxUser, [keyB.pub]);
      const hostB = await site(b, 'peek');
      const target = path.join(a.home, 'htdocs/site/index.php');
      const viaSftp = await sftpBatch(server(), b.linuxUser, keyB, [`get ${target} ${path.join(keys, 'b-got')}`, `get /../${a.linuxUser}/htdocs/site/index.php ${path.join(keys, 'b-got')}`]);
      expect(viaSftp.code).not.toBe(0);
      await expect(fs.stat(path.join(keys, 'b-got'))).rejects.toThrow();

      const local = path.join(keys, 'peek.php');
      await fs.writeFile(local, `<?php var_dump(@file_get_contents(${JSON.stringify(target)}), @scandir(${JSON.stringify(a.home)}));`);
      expect((await sftpBatch(server(), b.linuxUser, keyB, [`put ${local} /htdocs/site/peek.php`])).code).toBe(0);
      expect(await browse(s.web, hostB, '/peek.php')).toMatchObject({ status: 200, body: 'bool(false)\nbool(false)\n' });

      // Beneath PHP's open_basedir, the modes: b's user cannot enter a's webspace dirs at all.
      const bIds = await ids(b.linuxUser);
      const cat = spawnSync('setpriv', [`--reuid=${bIds.uid}`, `--regid=${bIds.gid}`, '--clear-groups', 'cat', target], { encoding: 'utf8' });
      expect({ status: cat.status, stderr: cat.stderr }).toEqual({ status: 1, stderr: `cat: ${target}: Permission denied\n` });
    });

    it("sshd's log tells each login with the key's fingerprint: the follower hands it on", async () => {
      expect((await sftpBatch(server(), a.linuxUser, keyA, ['pwd'])).code).toBe(0);
      const seen = await pollUntil(async () => uses.filter((u) => u.user === a.linuxUser), (l) => l.length > 0, 'a login of a in the log');
      expect(seen[0]).toEqual({ user: a.linuxUser, fingerprint: sshKeyFingerprint(keyA.pub), at: expect.any(Date) });
      const fp = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyA.file}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
      expect(seen[0].fingerprint).toBe(fp);
      expect(uses.every((u) => [a.linuxUser, b.linuxUser].includes(u.user))).toBe(true);
    });

    it('end to end: a key POSTed to /ssh-keys logs in at the package\'s sftp_host:sftp_port as sftp_user when its job is done; the login becomes its last_used_at', async () => {
      const c = await s.customer();
      const key = await newKey(keys, 'api');
      const stop = startSftpLogins({ config: { webServer: 'local', webSftpLog: s.sftp!.log }, store: s.t.store, log: { info() {}, warn() {} } })!;
      try {
        const r = await postSshKey(s.t, c.token, { package_id: c.packageId, public_key: `${key.pub}\n`, description: 'sftp test' });
        expect(r.status, r.body).toBe(202);
        await jobDone(s.t, c.token, r);
        const pkg = (await call(s.t.app, 'GET', `/packages/${c.packageId}`, { token: c.token })).json.data.attributes;
        expect({ host: pkg.sftp_host, port: pkg.sftp_port, user: pkg.sftp_user }).toEqual({ host: '127.0.0.1', port: s.sftp!.port, user: c.linuxUser });
        const login = await sftpBatch({ host: pkg.sftp_host, port: pkg.sftp_port, known_hosts: s.sftp!.known_hosts }, pkg.sftp_user, key, ['pwd']);
        expect(login, login.stderr).toMatchObject({ code: 0, stdout: 'sftp> pwd\nRemote working directory: /\n' });
        const shown = await pollUntil(
          async () => (await call(s.t.app, 'GET', `/ssh-keys/${r.json.data.id}`, { token: c.token })).json.data.attributes,
          (a) => a.last_used_at !== null,
          'the key\'s last_used_at',
        );
        expect(shown).toMatchObject({ fingerprint: sshKeyFingerprint(key.pub), last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/) });
      } finally {
        await stop();
      }
    });
  });
});
