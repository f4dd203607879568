// The local stack's package users (docs/decisions/0023-sftp.md "The local stack's users"): a web
// server whose state dir holds users/passwd gets its packages' users there — ids from 2000000 on,
// their own group, in hostplane-sftp — written in place (a bind mount of the file keeps seeing
// them), once; the webspace dirs and the PHP pool use those ids. Nothing of this machine's /etc.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolConfig } from '../../../src/provisioning/web/php-fpm-files.js';
import { addPrivateUser, hasPrivateUsers, privateGroupId, privateUserIds } from '../../../src/provisioning/web/private-users.js';
import type { WebServerConn } from '../../../src/provisioning/web/sites.js';
import { ensureLinuxUser, ensureWebspaceDir, ownerFor } from '../../../src/provisioning/web/webspace-dirs.js';

const isRoot = process.getuid?.() === 0;
const SYSTEM_PASSWD = 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
const SYSTEM_GROUP = 'root:x:0:\nnogroup:x:65534:\n';

describe('private users of a web server', () => {
  let root: string;
  let server: WebServerConn;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-users-'));
    server = { name: 'local', caddyAdmin: 'http://127.0.0.1:1', httpListen: '127.0.0.1:1', httpsListen: null, homeRoot: path.join(root, 'www'), stateDir: path.join(root, 'web'), php: {} };
  });
  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('without users/passwd in the state dir there are none', async () => {
    expect(await hasPrivateUsers(server)).toBe(false);
  });

  it('a user is added once, in place, with its own group and in hostplane-sftp; a second gets the next ids', async () => {
    await fs.mkdir(path.join(server.stateDir, 'users'), { recursive: true });
    const passwd = path.join(server.stateDir, 'users/passwd');
    const group = path.join(server.stateDir, 'users/group');
    await fs.writeFile(passwd, SYSTEM_PASSWD);
    await fs.writeFile(group, SYSTEM_GROUP);
    const inodes = [(await fs.stat(passwd)).ino, (await fs.stat(group)).ino];
    expect(await hasPrivateUsers(server)).toBe(true);

    const [a, again] = await Promise.all([addPrivateUser(server, 'web_a'), addPrivateUser(server, 'web_a')]);
    expect(a).toEqual({ uid: 2000001, gid: 2000001 });
    expect(again).toEqual(a);
    expect(await addPrivateUser(server, 'web_b')).toEqual({ uid: 2000002, gid: 2000002 });
    expect(await fs.readFile(passwd, 'utf8')).toBe(
      `${SYSTEM_PASSWD}web_a:x:2000001:2000001:hostplane package:${server.homeRoot}/web_a:/usr/sbin/nologin\nweb_b:x:2000002:2000002:hostplane package:${server.homeRoot}/web_b:/usr/sbin/nologin\n`,
    );
    expect(await fs.readFile(group, 'utf8')).toBe(`${SYSTEM_GROUP}hostplane-sftp:x:2000000:web_a,web_b\nweb_a:x:2000001:\nweb_b:x:2000002:\n`);
    expect([(await fs.stat(passwd)).ino, (await fs.stat(group)).ino]).toEqual(inodes);
    expect(await privateUserIds(server, 'web_b')).toEqual({ uid: 2000002, gid: 2000002 });
    expect(await privateUserIds(server, 'nobody')).toEqual({ uid: 65534, gid: 65534 });
    expect(await privateUserIds(server, 'web_none')).toBeNull();
    expect(await privateGroupId(server, 'hostplane-sftp')).toBe(2000000);
  });

  it.skipIf(!isRoot)("as root: ensureLinuxUser makes it there (never on this host), the home and dirs take its ids, the pool runs by ids", async () => {
    await ensureLinuxUser(server, 'web_c', { system: false });
    const ids = await privateUserIds(server, 'web_c');
    expect(ids).toEqual({ uid: 2000003, gid: 2000003 });
    expect(await ownerFor('web_c', server)).toEqual({ ...ids, private: true });
    const dir = await ensureWebspaceDir(server, 'web_c', '/htdocs/');
    const home = await fs.stat(path.join(server.homeRoot, 'web_c'));
    const st = await fs.stat(dir);
    expect([{ uid: home.uid, gid: home.gid, mode: home.mode & 0o7777 }, { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 }]).toEqual([
      { uid: 0, gid: 2000003, mode: 0o751 },
      { uid: 2000003, gid: 2000003, mode: 0o2750 },
    ]);
    const pool = poolConfig({ serverName: 'local', linuxUser: 'web_c', version: '8.2', owner: { ...ids!, private: true }, home: '/h', tmp: '/t', socket: '/s.sock' });
    expect(pool).toMatch(/^user = 2000003\ngroup = 2000003\nlisten = \/s\.sock$/m);
  });
});
