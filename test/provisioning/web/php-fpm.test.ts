// PHP-FPM pools against the real php-fpm 8.2 (docs/decisions/0008-web-servers.md
// "PHP-FPM"): PHP answers through a pool's socket (spoken to as a web server does, FastCGI),
// open_basedir confines it to the home and its tmp dir, pools of several users share one master,
// repeated calls change nothing, removal reloads or stops, a killed master comes back, stopAll
// leaves nothing running. Needs /usr/sbin/php-fpm8.2 (Debian package php8.2-fpm; or TEST_PHP_FPM).
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PhpFpmSupervisor } from '../../../src/provisioning/web/php-fpm.js';
import { PhpFpmRegistry } from '../../../src/provisioning/web/php-fpm-registry.js';
import type { WebServerConn } from '../../../src/provisioning/web/sites.js';
import { ensureWebspaceDir, linuxUserIds } from '../../../src/provisioning/web/webspace-dirs.js';
import { fastcgiGet } from '../../helpers/fastcgi.js';
import { requirable } from '../../helpers/required.js';
import { waitFor } from '../../helpers/wait.js';
import { alive } from '../../helpers/procs.js';

const PHP_FPM = process.env.TEST_PHP_FPM ?? '/usr/sbin/php-fpm8.2';
const describeFpm = requirable(existsSync(PHP_FPM) ? null : `${PHP_FPM} is not installed (Debian package php8.2-fpm)`);
const isRoot = process.getuid?.() === 0;

const roots: string[] = [];
const supervisors: PhpFpmSupervisor[] = [];
/** One for every supervisor here, as a web driver gives its own to all it makes: their calls per state dir run in turn. */
const registry = new PhpFpmRegistry();
/** Workers a test left without their master: killed after the file should the code under test not have. */
const strays: number[] = [];

/** A web server on fresh dirs (readable by other users: a pool may run as one). */
async function tempServer(): Promise<{ server: WebServerConn; supervisor: PhpFpmSupervisor }> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-phpfpm-'));
  await fs.chmod(root, 0o755);
  roots.push(root);
  const server: WebServerConn = {
    name: 'web-test',
    caddyAdmin: 'http://127.0.0.1:1',
    httpListen: '127.0.0.1:1',
    httpsListen: null,
    homeRoot: path.join(root, 'www'),
    stateDir: path.join(root, 'state'),
    php: { '8.2': PHP_FPM },
  };
  const supervisor = new PhpFpmSupervisor(server, { registry });
  supervisors.push(supervisor);
  return { server, supervisor };
}

afterAll(async () => {
  for (const s of supervisors) await s.stopAll();
  for (const pid of strays) {
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if ((await alive(pid)) && cmdline.startsWith('php-fpm')) process.kill(pid, 'SIGKILL');
  }
  for (const r of roots) await fs.rm(r, { recursive: true, force: true });
});

const PHP_FILES: Record<string, string> = {
  'version.php': '<?php echo PHP_VERSION;',
  'pid.php': '<?php echo getmypid();',
  'whoami.php': '<?php echo json_encode(["euid" => posix_geteuid(), "tmp" => sys_get_temp_dir()]);',
  // Every file function is confined: collect the warnings instead of printing them.
  'read.php': `<?php
$warnings = [];
set_error_handler(function ($no, $msg) use (&$warnings) { $warnings[] = $msg; return true; });
$tmp = tempnam(sys_get_temp_dir(), 'hp');
file_put_contents($tmp, 'tmp-ok');
echo json_encode([
  'outside' => file_get_contents('/etc/hostname'),
  'other' => isset($_GET['other']) ? file_get_contents($_GET['other']) : null,
  'home' => file_get_contents(__DIR__ . '/data.txt'),
  'tmp' => file_get_contents($tmp),
  'tmpdir' => dirname($tmp),
  'warnings' => $warnings,
]);
unlink($tmp);`,
};

/** The home of `user` (created as the worker does) with the test's PHP files and a data.txt. */
async function homeWithPhp(server: WebServerConn, user: string): Promise<string> {
  const home = await ensureWebspaceDir(server, user, '/');
  for (const [name, code] of Object.entries(PHP_FILES)) await fs.writeFile(path.join(home, name), code, { mode: 0o644 });
  await fs.writeFile(path.join(home, 'data.txt'), `home-ok ${user}`, { mode: 0o644 });
  return home;
}

function pidFile(server: WebServerConn): string {
  return path.join(server.stateDir, 'php', '8.2', 'php-fpm.pid');
}

async function masterPid(server: WebServerConn): Promise<number> {
  return Number.parseInt(await fs.readFile(pidFile(server), 'utf8'), 10);
}

/** The pid of the worker that answers a request on `socket` (it stays alive until idle 10 s or a reload). */
async function workerPid(socket: string, home: string): Promise<number> {
  const res = await fastcgiGet(socket, path.join(home, 'pid.php'));
  expect(res.status).toBe(200);
  return Number(res.body);
}

describeFpm('PHP-FPM supervisor (real php-fpm 8.2)', () => {
  let server: WebServerConn;
  let supervisor: PhpFpmSupervisor;
  let homeA: string;
  let homeB: string;
  const A = 'hp_a';
  const B = 'hp-b';

  beforeAll(async () => {
    ({ server, supervisor } = await tempServer());
    homeA = await homeWithPhp(server, A);
    homeB = await homeWithPhp(server, B);
  });

  it('an unknown PHP version is refused naming the installed ones; bad names before any file is written', async () => {
    await expect(supervisor.ensurePool(A, '7.4')).rejects.toThrow('PHP 7.4 is not installed on web server web-test (installed: 8.2)');
    await expect(supervisor.ensurePool(A, '8')).rejects.toThrow('"8" is not a PHP version (like 8.2)');
    await expect(supervisor.ensurePool(A, '../8.2')).rejects.toThrow('is not a PHP version');
    await expect(supervisor.ensurePool('../etc', '8.2')).rejects.toThrow('"../etc" is not a valid Linux user name');
    await expect(supervisor.ensurePool('Root', '8.2')).rejects.toThrow('is not a valid Linux user name');
    await expect(supervisor.removePool('a b', '8.2')).rejects.toThrow('is not a valid Linux user name');
    expect(existsSync(path.join(server.stateDir, 'php'))).toBe(false);
  });

  it('ensurePool starts the master and the pool runs PHP 8.2 from the home', async () => {
    const socket = await supervisor.ensurePool(A, '8.2');
    expect(socket).toBe(path.join(server.stateDir, 'php', '8.2', `${A}.sock`));
    const res = await fastcgiGet(socket, path.join(homeA, 'version.php'));
    expect(res).toMatchObject({ status: 200, stderr: '', appStatus: 0 });
    expect(res.body).toMatch(/^8\.2\.\d+$/);
    expect(await alive(await masterPid(server))).toBe(true);

    const pool = await fs.readFile(path.join(server.stateDir, 'php', '8.2', 'pools', `${A}.conf`), 'utf8');
    expect(pool).toContain(`[${A}]\n`);
    expect(pool).toContain(`listen = ${socket}\n`);
    expect(pool).toContain('pm = ondemand\n');
    expect(pool).toContain('pm.max_children = 5\n');
    expect(pool).toContain(`php_admin_value[open_basedir] = ${path.join(server.homeRoot, A)}/:${server.stateDir}/tmp/${A}/\n`);
    // hp_a is no Linux user here: no user line, the pool runs as the worker's own user.
    expect(pool).not.toMatch(/^user\s*=/m);
    const who = await fastcgiGet(socket, path.join(homeA, 'whoami.php'));
    expect(JSON.parse(who.body)).toEqual({ euid: process.getuid!(), tmp: path.join(server.stateDir, 'tmp', A) });

    const missing = await fastcgiGet(socket, path.join(homeA, 'nope.php'));
    expect(missing).toMatchObject({ status: 404, stderr: 'Primary script unknown' });
  });

  it('open_basedir: the home and the tmp dir are readable, /etc/hostname is not', async () => {
    const socket = await supervisor.ensurePool(A, '8.2');
    const res = await fastcgiGet(socket, path.join(homeA, 'read.php'));
    expect(res.status).toBe(200);
    const out = JSON.parse(res.body);
    expect(out).toMatchObject({ outside: false, other: null, home: `home-ok ${A}`, tmp: 'tmp-ok', tmpdir: path.join(server.stateDir, 'tmp', A) });
    expect(out.warnings[0]).toContain('open_basedir restriction in effect. File(/etc/hostname) is not within the allowed path(s)');
  });

  it("a second user's pool reloads the master; both answer, each confined to its own home", async () => {
    const socketA = await supervisor.ensurePool(A, '8.2');
    const masterBefore = await masterPid(server);
    const workerA = await workerPid(socketA, homeA);

    const socketB = await supervisor.ensurePool(B, '8.2');
    expect(socketB).toBe(path.join(server.stateDir, 'php', '8.2', `${B}.sock`));
    // A reload re-executes the master (a new pid once it is ready) and ends every worker.
    expect(await masterPid(server)).not.toBe(masterBefore);
    expect(await alive(masterBefore)).toBe(false);
    expect(await alive(workerA)).toBe(false);

    for (const [socket, home] of [
      [socketA, homeA],
      [socketB, homeB],
    ]) {
      const res = await fastcgiGet(socket, path.join(home, 'version.php'));
      expect(res.status).toBe(200);
      expect(res.body).toMatch(/^8\.2\.\d+$/);
    }
    const bReadsA = await fastcgiGet(socketB, path.join(homeB, 'read.php'), { query: `other=${encodeURIComponent(path.join(homeA, 'data.txt'))}` });
    expect(JSON.parse(bReadsA.body)).toMatchObject({ outside: false, other: false, home: `home-ok ${B}`, tmp: 'tmp-ok' });
    // A's pool does not even run a script of B's home.
    const aRunsB = await fastcgiGet(socketA, path.join(homeB, 'whoami.php'));
    expect(aRunsB).toMatchObject({ status: 404, body: 'No input file specified.\n' });
    expect(aRunsB.stderr).toContain('open_basedir restriction in effect');
  });

  it('ensurePool again changes nothing: same socket, same master, no reload (its workers live on)', async () => {
    const socketA = path.join(server.stateDir, 'php', '8.2', `${A}.sock`);
    const master = await masterPid(server);
    const workerA = await workerPid(socketA, homeA);
    const poolFile = path.join(server.stateDir, 'php', '8.2', 'pools', `${A}.conf`);
    const mtime = (await fs.stat(poolFile)).mtimeMs;

    expect(await supervisor.ensurePool(A, '8.2')).toBe(socketA);
    expect(await Promise.all([supervisor.ensurePool(A, '8.2'), supervisor.ensurePool(B, '8.2'), supervisor.ensurePool(A, '8.2')])).toEqual([
      socketA,
      path.join(server.stateDir, 'php', '8.2', `${B}.sock`),
      socketA,
    ]);
    expect(await masterPid(server)).toBe(master);
    expect(await alive(workerA)).toBe(true);
    expect((await fs.stat(poolFile)).mtimeMs).toBe(mtime);
  });

  it('removePool of one user reloads: its socket is gone, the other pool still answers', async () => {
    const socketB = path.join(server.stateDir, 'php', '8.2', `${B}.sock`);
    const master = await masterPid(server);
    await supervisor.removePool(B, '8.2');
    expect(existsSync(socketB)).toBe(false);
    expect(existsSync(path.join(server.stateDir, 'php', '8.2', 'pools', `${B}.conf`))).toBe(false);
    await expect(fastcgiGet(socketB, path.join(homeB, 'version.php'))).rejects.toThrow(/ENOENT/);
    const newMaster = await masterPid(server);
    expect(newMaster).not.toBe(master);
    expect(await alive(newMaster)).toBe(true);
    const res = await fastcgiGet(path.join(server.stateDir, 'php', '8.2', `${A}.sock`), path.join(homeA, 'version.php'));
    expect(res.body).toMatch(/^8\.2\.\d+$/);
    // Removing what is not there is no error and no reload.
    await supervisor.removePool(B, '8.2');
    expect(await masterPid(server)).toBe(newMaster);
  });

  it('a pool php-fpm refuses fails every call until fixed; the running master keeps serving the old one', async () => {
    const socketA = path.join(server.stateDir, 'php', '8.2', `${A}.sock`);
    const master = await masterPid(server);
    const broken = new PhpFpmSupervisor(server, { registry, listenGroup: 'hp-no-such-group' });
    supervisors.push(broken);
    for (let i = 0; i < 2; i++) {
      await expect(broken.ensurePool(A, '8.2')).rejects.toThrow(/configuration test failed: .*hp-no-such-group/s);
    }
    expect(await masterPid(server)).toBe(master);
    expect((await fastcgiGet(socketA, path.join(homeA, 'version.php'))).body).toMatch(/^8\.2\.\d+$/);

    expect(await supervisor.ensurePool(A, '8.2')).toBe(socketA);
    expect(await fs.readFile(path.join(server.stateDir, 'php', '8.2', 'pools', `${A}.conf`), 'utf8')).not.toContain('listen.group');
    expect((await fastcgiGet(socketA, path.join(homeA, 'version.php'))).body).toMatch(/^8\.2\.\d+$/);
  });

  it('a master killed with SIGKILL is started again by ensurePool, and the workers it left are gone', async () => {
    const socketA = path.join(server.stateDir, 'php', '8.2', `${A}.sock`);
    const master = await masterPid(server);
    const orphan = await workerPid(socketA, homeA);
    strays.push(orphan);
    process.kill(master, 'SIGKILL');
    await waitFor('the killed master to end', async () => !(await alive(master)));
    // Its worker outlives it, still holding the pool's listening socket.
    expect(await alive(orphan)).toBe(true);

    expect(await supervisor.ensurePool(A, '8.2')).toBe(socketA);
    const restarted = await masterPid(server);
    expect(restarted).not.toBe(master);
    expect(await alive(restarted)).toBe(true);
    expect(await alive(orphan)).toBe(false);
    const res = await fastcgiGet(socketA, path.join(homeA, 'version.php'));
    expect(res.body).toMatch(/^8\.2\.\d+$/);
  });

  it('removePool of the last pool stops the master', async () => {
    const master = await masterPid(server);
    const worker = await workerPid(path.join(server.stateDir, 'php', '8.2', `${A}.sock`), homeA);
    await supervisor.removePool(A, '8.2');
    expect(await alive(master)).toBe(false);
    expect(await alive(worker)).toBe(false);
    expect(existsSync(pidFile(server))).toBe(false);
    expect(existsSync(path.join(server.stateDir, 'php', '8.2', `${A}.sock`))).toBe(false);
    await supervisor.removePool(A, '8.2');
    // And the next pool starts a new master.
    const socket = await supervisor.ensurePool(A, '8.2');
    expect((await fastcgiGet(socket, path.join(homeA, 'version.php'))).body).toMatch(/^8\.2\.\d+$/);
    expect(await masterPid(server)).not.toBe(master);
  });

  it('concurrent first calls on a fresh state dir start one master; stopAll leaves none of its processes', async () => {
    const fresh = await tempServer();
    const users = ['hp_c1', 'hp_c2', 'hp_c3'];
    const homes = await Promise.all(users.map((u) => homeWithPhp(fresh.server, u)));
    const sockets = await Promise.all(users.map((u) => fresh.supervisor.ensurePool(u, '8.2')));
    const master = await masterPid(fresh.server);
    const workers: number[] = [];
    for (let i = 0; i < users.length; i++) {
      const res = await fastcgiGet(sockets[i], path.join(homes[i], 'version.php'));
      expect(res.body).toMatch(/^8\.2\.\d+$/);
      workers.push(await workerPid(sockets[i], homes[i]));
    }
    // A second supervisor of the same state dir sees the same master.
    const again = new PhpFpmSupervisor(fresh.server, { registry });
    expect(await again.ensurePool(users[0], '8.2')).toBe(sockets[0]);
    expect(await masterPid(fresh.server)).toBe(master);

    await fresh.supervisor.stopAll();
    for (const pid of [master, ...workers]) expect(await alive(pid)).toBe(false);
    expect(existsSync(pidFile(fresh.server))).toBe(false);
    await fresh.supervisor.stopAll(); // nothing left to stop
  });

  it.skipIf(!isRoot)('as root, the pool of an existing Linux user runs as that user (nobody)', async () => {
    const nobody = await linuxUserIds('nobody');
    expect(nobody).not.toBeNull();
    const home = await homeWithPhp(server, 'nobody');
    // The home is root's with the user's group (sshd's chroot rule, decision 0023); the pool still runs as the user.
    expect(await fs.stat(home)).toMatchObject({ uid: 0, gid: nobody!.gid });
    const socket = await supervisor.ensurePool('nobody', '8.2');
    const pool = await fs.readFile(path.join(server.stateDir, 'php', '8.2', 'pools', 'nobody.conf'), 'utf8');
    expect(pool).toMatch(/^user = nobody$/m);
    const tmp = await fs.stat(path.join(server.stateDir, 'tmp', 'nobody'));
    expect({ uid: tmp.uid, mode: tmp.mode & 0o777 }).toEqual({ uid: nobody!.uid, mode: 0o700 });

    const who = JSON.parse((await fastcgiGet(socket, path.join(home, 'whoami.php'))).body);
    expect(who.euid).toBe(nobody!.uid);
    const read = JSON.parse((await fastcgiGet(socket, path.join(home, 'read.php'))).body);
    expect(read).toMatchObject({ outside: false, home: 'home-ok nobody', tmp: 'tmp-ok' });
    await supervisor.removePool('nobody', '8.2');
  });
});
