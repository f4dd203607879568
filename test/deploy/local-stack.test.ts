// The local stack (docs/decisions/0008-web-servers.md): deploy/local/up.sh run as an
// operator runs it — private Caddy under a temp dir on three consecutive loopback ports, the web
// server registered through the admin CLI in a fresh store of each engine, stack.json, the
// printout — then refusals (a running stack in the dir, a port in use, no DATABASE_URL, a store
// nobody migrated, the name registered for another stack: the Caddy it started does not stay; a run
// that fails after registering its web server takes it out again),
// deploy/local/down.sh stopping Caddy and the PHP-FPM master hostplane started by their pids and
// keeping the customers' files, and up.sh again on the same dir and store. Needs caddy, bash, jq,
// curl and a /usr/sbin/php-fpm<version>; skipped without, failed under CI_REQUIRE_ALL=1.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PhpFpmSupervisor } from '../../src/provisioning/web/php-fpm.js';
import { PhpFpmRegistry } from '../../src/provisioning/web/php-fpm-registry.js';
import type { WebServerConn } from '../../src/provisioning/web/sites.js';
import { ENGINES } from '../helpers/app.js';
import { newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { ROOT, STACK_UP_MS, scriptEnv } from '../helpers/stack-scripts.js';
import { DOWN, PHP, UP, describeMailStack, describeStack, freeBase, script, unregisterHint, upOnFreePorts } from '../helpers/stack.js';
import { alive, argv0 } from '../helpers/procs.js';
import { placeholderMailServer } from '../helpers/email.js';
import { openStore } from '../../src/db/index.js';

// Each step runs up.sh, which starts daemons: under a loaded CI that takes minutes.
const STEP_MS = STACK_UP_MS;

/** GET <admin>/config/ → status and parsed body; rejects when nothing answers. */
async function caddyConfig(admin: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${admin}/config/`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

async function listServers(url: string): Promise<unknown> {
  const r = await runCli(['admin', 'web-server', 'list', '--json'], { DATABASE_URL: url });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(r.stdout);
}

const tempRoots: string[] = [];
async function tempRoot(): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-stack-'));
  tempRoots.push(root);
  return root;
}

/** Every stack dir a test made: down.sh runs on each in afterAll, should a test have failed half-way. */
const stackDirs: string[] = [];
afterAll(async () => {
  for (const dir of stackDirs) await script(DOWN, [dir], {}).catch(() => undefined);
  for (const root of tempRoots) await fs.rm(root, { recursive: true, force: true });
}, STEP_MS);

describeStack('deploy/local/up.sh and down.sh: refusals that need no store', () => {
  it('without DATABASE_URL: exit 1 with what to set, nothing started', async () => {
    const dir = path.join(await tempRoot(), 'stack');
    stackDirs.push(dir);
    const run = await script(UP, [dir, String(await freeBase())], {});
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'up.sh: DATABASE_URL is not set: name the store to register the stack in, e.g. DATABASE_URL=/tmp/hostplane.db (migrated with `hostplane migrate`).\n',
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('a wrong call: exit 2 with the usage', async () => {
    expect(await script(UP, ['only-a-dir'], { DATABASE_URL: '/nonexistent.db' })).toEqual({
      code: 2,
      stdout: '',
      stderr: `usage: DATABASE_URL=<store> ${UP} <dir> <port-base>\n`,
    });
    const bad = await script(UP, ['/tmp/x', '65534'], { DATABASE_URL: '/nonexistent.db' });
    expect(bad).toEqual({
      code: 1,
      stdout: '',
      stderr: "up.sh: port-base must be a port number from 1 to 65533 (the stack uses it and the next two); got '65534'.\n",
    });
    expect(await script(DOWN, [], {})).toEqual({ code: 2, stdout: '', stderr: `usage: ${DOWN} <dir> [--purge]\n` });
  });

  it('down.sh on a dir that holds no stack: exit 0, nothing to stop', async () => {
    const root = await tempRoot();
    expect(await script(DOWN, [path.join(root, 'none')], {})).toEqual({
      code: 0,
      stdout: `down.sh: ${path.join(root, 'none')} does not exist: nothing to stop.\n`,
      stderr: '',
    });
    expect(await script(DOWN, [root], {})).toEqual({ code: 0, stdout: `down.sh: nothing was running in ${await fs.realpath(root)}.\n`, stderr: '' });
  });

  it('a store nobody migrated: exit 1 saying so, and the Caddy it started is stopped again', async () => {
    const db = await newDatabase('sqlite');
    try {
      const dir = path.join(await tempRoot(), 'stack');
      stackDirs.push(dir);
      const { run, base } = await upOnFreePorts(dir, { DATABASE_URL: db.url });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('(is the database migrated? run `hostplane migrate`)');
      expect(run.stderr).toContain('up.sh: could not read the web servers of DATABASE_URL');
      expect(run.stderr).toMatch(/up\.sh: stopped the Caddy it had started\.\n$/);
      expect(existsSync(path.join(dir, 'caddy/caddy.pid'))).toBe(false);
      expect(existsSync(path.join(dir, 'stack.json'))).toBe(false);
      await expect(caddyConfig(`http://127.0.0.1:${base}`)).rejects.toThrow();
    } finally {
      await db.drop();
    }
  }, STEP_MS);
});

describeStack('deploy/local/up.sh and down.sh: a stack registered in a fresh store', () => {
  describe.each(ENGINES)('%s', (engine) => {
    let db: TestDb;
    let root: string;
    let dir: string;
    let base: number;
    let admin: string;
    let caddyPid: number;
    let phpPid: number;
    const supervisors: PhpFpmSupervisor[] = [];

    const expectedServer = () => ({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      name: 'local',
      caddy_admin: admin,
      http_listen: `127.0.0.1:${base + 1}`,
      https_listen: `127.0.0.1:${base + 2}`,
      addresses: ['127.0.0.1'],
      home_root: path.join(dir, 'www'),
      state_dir: path.join(dir, 'web'),
      php: PHP,
      socket_group: null,
      default: true,
      sftp_host: '127.0.0.1',
      sftp_port: base + 20,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });

    beforeAll(async () => {
      db = await newDatabase(engine);
      expect((await runCli(['migrate'], { DATABASE_URL: db.url })).code).toBe(0);
      root = await tempRoot();
      // The resolved path: what up.sh writes (no symlinks in it, as in /tmp on macOS).
      dir = path.join(await fs.realpath(root), 'stack');
      stackDirs.push(dir);
    }, STEP_MS);

    afterAll(async () => {
      await script(DOWN, [dir], {}).catch(() => undefined);
      for (const s of supervisors) await s.stopAll();
      await db?.drop();
    }, STEP_MS);

    it('a port of the range in use: exit 1 naming it, nothing started or registered', async () => {
      const taken = net.createServer();
      let port = 0;
      for (;;) {
        const b = await freeBase();
        const ok = await new Promise<boolean>((resolve) => {
          taken.once('error', () => resolve(false));
          taken.listen(b + 1, '127.0.0.1', () => resolve(true));
        });
        if (ok) {
          port = b + 1;
          break;
        }
      }
      try {
        const run = await script(UP, [dir, String(port - 1)], { DATABASE_URL: db.url });
        expect(run).toEqual({
          code: 1,
          stdout: '',
          stderr: `up.sh: port ${port} on 127.0.0.1 is in use; the stack needs ${port - 1}, ${port} and ${port + 1}: pick another port-base.\n`,
        });
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
      expect(existsSync(dir)).toBe(false);
      expect(await listServers(db.url)).toEqual([]);
    });

    it('up.sh starts Caddy, registers web server "local", writes stack.json and says how to use it', async () => {
      const up = await upOnFreePorts(dir, { DATABASE_URL: db.url });
      base = up.base;
      admin = `http://127.0.0.1:${base}`;
      expect(up.run.stderr).toBe('');
      expect(up.run.code).toBe(0);

      expect(JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'))).toEqual({
        web: {
          name: 'local',
          http: `127.0.0.1:${base + 1}`,
          https: `127.0.0.1:${base + 2}`,
          caddy_admin: admin,
          home_root: path.join(dir, 'www'),
        },
      });
      expect(await listServers(db.url)).toEqual([expectedServer()]);

      // Caddy runs from the pid file, answers on its admin port with only the admin config.
      caddyPid = Number.parseInt(await fs.readFile(path.join(dir, 'caddy/caddy.pid'), 'utf8'), 10);
      expect(await alive(caddyPid)).toBe(true);
      expect(path.basename(await argv0(caddyPid))).toBe('caddy');
      expect(await caddyConfig(admin)).toEqual({ status: 200, body: { admin: { listen: `127.0.0.1:${base}` } } });
      // Its autosave stays in the stack's dir (XDG_CONFIG_HOME), not the user's home.
      expect(existsSync(path.join(dir, 'caddy/config/caddy/autosave.json'))).toBe(true);

      const out = up.run.stdout;
      expect(out).toMatch(new RegExp(`^hostplane local stack in ${dir}; registered web server "local" in this store\\.\n`));
      expect(out).toContain(`Caddy    admin ${admin}, HTTP 127.0.0.1:${base + 1}, HTTPS 127.0.0.1:${base + 2} (pid ${caddyPid}, log ${dir}/caddy/caddy.log)`);
      for (const [v, bin] of Object.entries(PHP)) expect(out).toContain(`${v} (${bin})`);
      expect(out).toContain(`starts one master per version on demand, under ${dir}/web/php`);
      // The command line pastes as is: its DATABASE_URL is the store's, quoted for the shell.
      const quoted = /\n {2}WEB_SERVER=local WEB_TLS_ISSUER=internal DATABASE_URL=(\S+)(?: WEB_SFTP_LOG=\S+)? npm start\n/.exec(out)?.[1];
      expect(spawnSync('bash', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' }).stdout).toBe(db.url);
      expect(out).toContain(`curl -s -H 'Host: <fqdn>' http://127.0.0.1:${base + 1}/`);
      expect(out).toContain(`${DOWN} ${dir}\n`);
    }, STEP_MS);

    it('a second up.sh on the running stack: exit 1, the running one untouched', async () => {
      const again = await script(UP, [dir, String(base)], { DATABASE_URL: db.url });
      expect(again).toEqual({
        code: 1,
        stdout: '',
        stderr: `up.sh: ${dir} already has a running stack (caddy pid ${caddyPid}); stop it first with ${DOWN} ${dir}\n`,
      });
      expect(await fs.readFile(path.join(dir, 'caddy/caddy.pid'), 'utf8')).toBe(`${caddyPid}\n`);
      expect(await alive(caddyPid)).toBe(true);
      expect((await caddyConfig(admin)).status).toBe(200);
    });

    it('down.sh stops Caddy and the PHP-FPM master hostplane started, by pid; pid files go, customer files stay', async () => {
      // A PHP pool as the web worker of "local" makes one: its master's pid file is under <dir>/web.
      const [registered] = (await listServers(db.url)) as Array<{ php: Record<string, string>; state_dir: string; home_root: string }>;
      const server: WebServerConn = {
        name: 'local',
        caddyAdmin: admin,
        httpListen: `127.0.0.1:${base + 1}`,
        httpsListen: `127.0.0.1:${base + 2}`,
        homeRoot: registered.home_root,
        stateDir: registered.state_dir,
        php: registered.php,
      };
      const supervisor = new PhpFpmSupervisor(server, { registry: new PhpFpmRegistry() });
      supervisors.push(supervisor);
      const version = Object.keys(PHP).sort()[0];
      await supervisor.ensurePool('hp_stack', version);
      const phpPidFile = path.join(dir, 'web/php', version, 'php-fpm.pid');
      phpPid = Number.parseInt(await fs.readFile(phpPidFile, 'utf8'), 10);
      expect(await alive(phpPid)).toBe(true);
      await fs.mkdir(path.join(dir, 'www/hp_stack'), { recursive: true });
      await fs.writeFile(path.join(dir, 'www/hp_stack/index.html'), 'customer file');

      const down = await script(DOWN, [dir], {});
      expect(down.stderr).toBe('');
      expect(down.code).toBe(0);
      // The stops (in no particular order), then how to unregister the server, which stays.
      const hint = unregisterHint(db.url, 'local');
      expect(down.stdout.endsWith(hint)).toBe(true);
      expect(down.stdout.slice(0, -hint.length).split('\n').sort()).toEqual(['', `down.sh: stopped caddy (pid ${caddyPid}).`, `down.sh: stopped php-fpm (pid ${phpPid}).`]);
      expect(await listServers(db.url)).toEqual([expectedServer()]);
      expect(await alive(caddyPid)).toBe(false);
      expect(await alive(phpPid)).toBe(false);
      expect(existsSync(path.join(dir, 'caddy/caddy.pid'))).toBe(false);
      expect(existsSync(phpPidFile)).toBe(false);
      await expect(caddyConfig(admin)).rejects.toThrow();
      expect(await fs.readFile(path.join(dir, 'www/hp_stack/index.html'), 'utf8')).toBe('customer file');
      expect(existsSync(path.join(dir, 'stack.json'))).toBe(true);

      expect(await script(DOWN, [dir], {})).toEqual({ code: 0, stdout: `down.sh: nothing was running in ${dir}.\n`, stderr: '' });
    }, STEP_MS);

    it('a pid file naming a process that is not the stack\'s: left alone, the file removed', async () => {
      // As when the pid was reused after a crash: alive, and neither caddy nor php-fpm.
      const other = spawn('sleep', ['60'], { stdio: 'ignore' });
      try {
        await fs.writeFile(path.join(dir, 'caddy/caddy.pid'), `${other.pid}\n`);
        expect(await script(DOWN, [dir], {})).toEqual({
          code: 0,
          stdout: `down.sh: pid ${other.pid} of ${dir}/caddy/caddy.pid is not caddy php-fpm any more (left alone).\ndown.sh: nothing was running in ${dir}.\n`,
          stderr: '',
        });
        expect(existsSync(path.join(dir, 'caddy/caddy.pid'))).toBe(false);
        expect(await alive(other.pid!)).toBe(true);
      } finally {
        other.kill('SIGKILL');
      }
    });

    it('up.sh again on the same dir and store: the server is not added again; then down.sh', async () => {
      const again = await script(UP, [dir, String(base)], { DATABASE_URL: db.url });
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(new RegExp(`^hostplane local stack in ${dir}; web server "local" was registered in this store already: not added again\\.\n`));
      const servers = (await listServers(db.url)) as unknown[];
      expect(servers).toEqual([expectedServer()]);
      const pid = Number.parseInt(await fs.readFile(path.join(dir, 'caddy/caddy.pid'), 'utf8'), 10);
      expect(pid).not.toBe(caddyPid);
      expect(await alive(pid)).toBe(true);
      expect(await caddyConfig(admin)).toEqual({ status: 200, body: { admin: { listen: `127.0.0.1:${base}` } } });
      expect(await fs.readFile(path.join(dir, 'www/hp_stack/index.html'), 'utf8')).toBe('customer file');

      expect(await script(DOWN, [dir], {})).toEqual({ code: 0, stdout: `down.sh: stopped caddy (pid ${pid}).\n${unregisterHint(db.url, 'local')}`, stderr: '' });
      expect(await alive(pid)).toBe(false);
    }, STEP_MS);

    it('the name registered for another stack: exit 1 saying which, the Caddy it started is stopped again', async () => {
      const other = path.join(await fs.realpath(root), 'other');
      stackDirs.push(other);
      const { run, base: otherBase } = await upOnFreePorts(other, { DATABASE_URL: db.url });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `up.sh: web server "local" is registered in this store already, but for another stack (caddy admin ${admin}, HTTP 127.0.0.1:${base + 1}, ` +
          `HTTPS 127.0.0.1:${base + 2}, home root ${dir}/www, state dir ${dir}/web); use the same <dir> and port-base, or another name: ` +
          `STACK_WEB_NAME=<name> ${UP} ..., or unregister it: hostplane admin web-server remove local\nup.sh: stopped the Caddy it had started.\n`,
      );
      expect(existsSync(path.join(other, 'caddy/caddy.pid'))).toBe(false);
      await expect(caddyConfig(`http://127.0.0.1:${otherBase}`)).rejects.toThrow();
      expect(await listServers(db.url)).toEqual([expectedServer()]);
    }, STEP_MS);

    it('down.sh --purge removes the stack\'s dir and prints how to unregister; pasted, that frees the name for a stack elsewhere', async () => {
      const purge = await script(DOWN, [dir, '--purge'], {});
      expect(purge).toEqual({
        code: 0,
        stdout: `down.sh: nothing was running in ${dir}.\n${unregisterHint(db.url, 'local')}down.sh: removed ${dir}.\n`,
        stderr: '',
      });
      expect(existsSync(dir)).toBe(false);

      // The printed command as an operator pastes it, with `hostplane` on PATH.
      const command = purge.stdout.split('\n').find((l) => l.includes('hostplane admin web-server remove'))!.trim();
      const bin = await tempRoot();
      const tsx = execFileSync(process.execPath, ['--input-type=module', '-e', 'console.log(import.meta.resolve("tsx"))'], { cwd: ROOT, encoding: 'utf8' }).trim();
      await fs.writeFile(path.join(bin, 'hostplane'), `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${ROOT}/src/main.ts" "$@"\n`, { mode: 0o755 });
      expect(spawnSync('bash', ['-c', command], { env: scriptEnv({ PATH: `${bin}:${process.env.PATH}` }), encoding: 'utf8' })).toMatchObject({
        status: 0,
        stdout: 'Removed web server local; nothing on the server itself was changed.\n',
        stderr: '',
      });
      expect(await listServers(db.url)).toEqual([]);

      // A stack in another dir now registers under the name; with PORT, its npm start line says so.
      const other = path.join(await fs.realpath(root), 'other');
      stackDirs.push(other);
      const { run } = await upOnFreePorts(other, { DATABASE_URL: db.url, PORT: '18123' });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(new RegExp(`^hostplane local stack in ${other}; registered web server "local" in this store\\.\n`));
      expect(run.stdout).toMatch(/\n {2}WEB_SERVER=local WEB_TLS_ISSUER=internal DATABASE_URL=\S+ PORT=18123(?: WEB_SFTP_LOG=\S+)? npm start\n/);
      expect(await listServers(db.url)).toEqual([expect.objectContaining({ name: 'local', home_root: path.join(other, 'www') })]);
      const down = await script(DOWN, [other, '--purge'], {});
      expect(down.stdout).toMatch(/^down\.sh: stopped caddy \(pid [0-9]+\)\.\n/);
      expect(down.stdout).toContain(unregisterHint(db.url, 'local'));
    }, STEP_MS);
  });
});

describeMailStack('deploy/local/up.sh: a run that fails after registering its web server', () => {
  it('takes the web server out of the store again, so a second try is not refused', async () => {
    const db = await newDatabase('sqlite');
    try {
      expect(await runCli(['migrate'], { DATABASE_URL: db.url })).toMatchObject({ code: 0 });
      // A mail server of the stack's name that points elsewhere (nothing answers there, so it is
      // written to the store directly): up.sh refuses it after the web server is in.
      const store = await openStore(db.url);
      try {
        await placeholderMailServer(store, 'local');
      } finally {
        await store.close();
      }
      // The mail daemons' users must enter the dir (mkdtemp makes it 0700).
      const root = await tempRoot();
      await fs.chmod(root, 0o755);
      const dir = path.join(root, 'stack');
      stackDirs.push(dir);
      const { run } = await upOnFreePorts(dir, { DATABASE_URL: db.url });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain('up.sh: mail server "local" is registered in this store already, but for another stack (doveadm http://127.0.0.1:9');
      expect(run.stderr).toContain('up.sh: removed the web server "local" it had registered.\n');
      expect(await listServers(db.url)).toEqual([]);
      expect(existsSync(path.join(dir, 'stack.json'))).toBe(false);
    } finally {
      await db.drop();
    }
  }, STEP_MS);
});
