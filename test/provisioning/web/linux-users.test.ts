// A web node's package users (WEB_CREATE_USERS; docs/decisions/0023-sftp.md): ensureLinuxUser makes
// a missing user with useradd — its own group, no shell, in hostplane-sftp, which it creates — and
// adds an older user to that group; the home and webspace dirs then take its ids and the web group
// (--socket-group). Run where this machine's /etc is a copy: a private mount namespace binds a
// copy of /etc over it, so useradd changes the copy only. Needs root, unshare, useradd.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requirable } from '../../helpers/required.js';
import { ROOT } from '../../helpers/stack-scripts.js';

function missing(): string | null {
  if (process.getuid?.() !== 0) return 'useradd needs root (it runs on a copy of /etc here)';
  const absent = ['unshare', 'useradd', 'usermod', 'groupadd'].filter((bin) => spawnSync('bash', ['-c', `PATH=$PATH:/usr/sbin command -v ${bin}`]).status !== 0);
  return absent.length ? `${absent.join(', ')} not installed (Debian: util-linux, passwd)` : null;
}

/** What the script prints, run by node in a namespace where `<etc>` is /etc. */
function inCopiedEtc(etc: string, script: string): unknown {
  const tsx = execFileSync(process.execPath, ['--input-type=module', '-e', 'console.log(import.meta.resolve("tsx"))'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const out = execFileSync('unshare', ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', 'mount --bind "$0" /etc && exec "$@"', etc, process.execPath, '--import', tsx, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out);
}

requirable(missing())('package users on a web node (a copy of /etc)', () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-users-etc-'));
    await fs.cp('/etc', path.join(root, 'etc'), { recursive: true, verbatimSymlinks: true, filter: (src) => !src.startsWith('/etc/ssl/private') });
  });
  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('a new user gets its group and hostplane-sftp; an older one joins it; its home is root\'s 0751, its dirs its own with the web group, 2750', async () => {
    const server = { name: 'web1', caddyAdmin: 'http://127.0.0.1:1', httpListen: '127.0.0.1:1', httpsListen: null, homeRoot: path.join(root, 'www'), stateDir: path.join(root, 'www/.hostplane'), php: {}, socketGroup: 'hp_webgrp' };
    const script = `
      import { execFileSync } from 'node:child_process';
      import fs from 'node:fs';
      import { ensureLinuxUser, ensureWebspaceDir, linuxUserIds } from './src/provisioning/web/webspace-dirs.ts';
      const server = ${JSON.stringify(server)};
      execFileSync('groupadd', ['hp_webgrp']);
      execFileSync('useradd', ['--no-create-home', '--user-group', 'hp_older']);
      await ensureLinuxUser(server, 'hp_new', { system: true });
      await ensureLinuxUser(server, 'hp_new', { system: true });
      await ensureLinuxUser(server, 'hp_older', { system: true });
      await ensureLinuxUser(server, 'hp_skipped', { system: false });
      const dir = await ensureWebspaceDir(server, 'hp_new', '/htdocs/');
      const st = (p) => { const s = fs.statSync(p); return { uid: s.uid, gid: s.gid, mode: s.mode & 0o7777 }; };
      const gid = (g) => Number(execFileSync('getent', ['group', g], { encoding: 'utf8' }).split(':')[2]);
      console.log(JSON.stringify({
        passwd: execFileSync('getent', ['passwd', 'hp_new'], { encoding: 'utf8' }).split(':').slice(5).join(':').trim(),
        groups: { hp_new: execFileSync('id', ['-nG', 'hp_new'], { encoding: 'utf8' }).trim(), hp_older: execFileSync('id', ['-nG', 'hp_older'], { encoding: 'utf8' }).trim() },
        skipped: await linuxUserIds('hp_skipped'),
        ids: await linuxUserIds('hp_new'), web: gid('hp_webgrp'),
        home: st(server.homeRoot + '/hp_new'), dir: st(dir),
      }));`;
    const r = inCopiedEtc(path.join(root, 'etc'), script) as Record<string, any>;
    expect(r).toEqual({
      passwd: `${server.homeRoot}/hp_new:/usr/sbin/nologin`,
      groups: { hp_new: 'hp_new hostplane-sftp', hp_older: 'hp_older hostplane-sftp' },
      skipped: null,
      ids: { uid: expect.any(Number), gid: expect.any(Number) },
      web: expect.any(Number),
      home: { uid: 0, gid: r.ids.gid, mode: 0o751 },
      dir: { uid: r.ids.uid, gid: r.web, mode: 0o2750 },
    });
    // This machine's own /etc saw none of it.
    expect(spawnSync('getent', ['passwd', 'hp_new']).status).toBe(2);
    expect(spawnSync('getent', ['group', 'hostplane-sftp']).status).toBe(2);
  });
});
