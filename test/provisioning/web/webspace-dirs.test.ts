// Webspace directories on the web server's host (API guide "Subdomains";
// docs/decisions/0008-web-servers.md): a path is created inside the package's home, `..` and
// symlinks leading outside it are refused (and nothing is created behind them), symlinks that stay
// inside are followed; the probe's marker file is written and removed.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebServerConn } from '../../../src/provisioning/web/sites.js';
import {
  ensureWebspaceDir,
  linuxUserIds,
  removeMarker,
  WebspaceEscapeError,
  writeMarker,
} from '../../../src/provisioning/web/webspace-dirs.js';

const isRoot = process.getuid?.() === 0;

describe('webspace directories', () => {
  let root: string;
  let server: WebServerConn;
  let home: string;
  const USER = 'hp_w1';

  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-webspace-')));
    server = {
      name: 'web-test',
      caddyAdmin: 'http://127.0.0.1:1',
      httpListen: '127.0.0.1:1',
      httpsListen: null,
      homeRoot: path.join(root, 'www'),
      stateDir: path.join(root, 'state'),
      php: {},
    };
    home = path.join(root, 'www', USER);
  });

  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  /** The error `ensureWebspaceDir` rejects with. */
  async function refusal(apiPath: string, user = USER): Promise<Error> {
    const err = await ensureWebspaceDir(server, user, apiPath).then(
      () => null,
      (e: unknown) => e,
    );
    if (!(err instanceof Error)) throw new Error(`"${apiPath}" was not refused`);
    return err;
  }

  it('creates the home and a nested path, and returns its realpath; again is the same', async () => {
    expect(existsSync(home)).toBe(false);
    const dir = await ensureWebspaceDir(server, USER, '/www/sub/deep/');
    expect(dir).toBe(path.join(home, 'www', 'sub', 'deep'));
    expect((await fs.stat(dir)).isDirectory()).toBe(true);
    expect(await ensureWebspaceDir(server, USER, '/www/sub/deep/')).toBe(dir);
    expect(await ensureWebspaceDir(server, USER, '/www/sub/deep')).toBe(dir);
    expect(await ensureWebspaceDir(server, USER, '/www//./sub/deep/')).toBe(dir);
    expect(await ensureWebspaceDir(server, USER, '/')).toBe(home);
  });

  it("'..' is refused, wherever it is, and nothing is created", async () => {
    for (const p of ['/../', '/../x/', '/www/../../x/', '/www/..', '/www/sub/../../../hp_w2/']) {
      const err = await refusal(p);
      expect(err).toBeInstanceOf(WebspaceEscapeError);
      expect(err.message).toBe(`webspace path "${p}" leaves the home ('..')`);
    }
    expect(existsSync(path.join(root, 'www', 'x'))).toBe(false);
    expect(existsSync(path.join(root, 'x'))).toBe(false);
    expect(existsSync(path.join(root, 'www', 'hp_w2'))).toBe(false);
  });

  it('a symlink pointing outside the home is refused, on the way or at the end, and nothing is created behind it', async () => {
    await ensureWebspaceDir(server, USER, '/');
    const outside = path.join(root, 'outside');
    await fs.mkdir(outside);
    await fs.symlink(outside, path.join(home, 'link'));
    await fs.symlink('/tmp', path.join(home, 'tmp-link'));
    await fs.symlink('..', path.join(home, 'up')); // relative: the home root
    await fs.symlink(path.join(root, 'nowhere'), path.join(home, 'dangling'));
    const unique = `hostplane-escape-${crypto.randomBytes(6).toString('hex')}`;

    for (const p of ['/link/sub/', '/link/', `/tmp-link/${unique}/`, '/up/hp_w2/', '/up/', '/dangling/x/', '/dangling/']) {
      const err = await refusal(p);
      expect(err, p).toBeInstanceOf(WebspaceEscapeError);
      expect(err.message, p).toBe(`"${p}" leads through a symlink outside the home`);
    }
    expect(await fs.readdir(outside)).toEqual([]);
    expect(existsSync(path.join('/tmp', unique))).toBe(false);
    expect(existsSync(path.join(root, 'www', 'hp_w2'))).toBe(false);
    expect(existsSync(path.join(root, 'nowhere'))).toBe(false);
  });

  it('a symlink that stays inside the home is followed: the realpath is returned', async () => {
    await ensureWebspaceDir(server, USER, '/real/');
    await fs.symlink('real', path.join(home, 'alias'));
    await fs.symlink(path.join(home, 'real'), path.join(home, 'alias-abs'));
    expect(await ensureWebspaceDir(server, USER, '/alias/x/')).toBe(path.join(home, 'real', 'x'));
    expect(await ensureWebspaceDir(server, USER, '/alias-abs/x/y/')).toBe(path.join(home, 'real', 'x', 'y'));
    expect(await ensureWebspaceDir(server, USER, '/alias/')).toBe(path.join(home, 'real'));
  });

  it('a file in the way, a path without its leading /, a bad user: plain errors, not escapes', async () => {
    await fs.writeFile(path.join(home, 'file.txt'), 'x');
    const notDir = await refusal('/file.txt/');
    expect(notDir).not.toBeInstanceOf(WebspaceEscapeError);
    expect(notDir.message).toBe('"/file.txt/": file.txt is not a directory');

    const relative = await refusal('www/');
    expect(relative).not.toBeInstanceOf(WebspaceEscapeError);
    expect(relative.message).toBe(`webspace path "www/" must start with '/'`);

    const control = await refusal('/a\nb/');
    expect(control.message).toBe('webspace path contains a control character or a backslash');

    for (const user of ['../etc', 'Root', '', 'a'.repeat(33)]) {
      const bad = await refusal('/', user);
      expect(bad.message).toBe(`"${user}" is not a valid Linux user name`);
    }
    expect(await fs.readdir(path.join(root, 'www'))).toEqual([USER]);
  });

  it.skipIf(!isRoot)("as root, an existing user's home is root's with its group, 0751 (sshd's chroot rule), its new dirs its own, 2750 (decision 0023)", async () => {
    const nobody = await linuxUserIds('nobody');
    expect(nobody).not.toBeNull();
    const dir = await ensureWebspaceDir(server, 'nobody', '/site/public/');
    const owners = async () => {
      const seen = [];
      for (const p of [path.join(root, 'www', 'nobody'), path.join(root, 'www', 'nobody', 'site'), dir]) {
        const st = await fs.stat(p);
        seen.push({ p, uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 });
      }
      return seen;
    };
    const want = [
      { p: path.join(root, 'www', 'nobody'), uid: 0, gid: nobody!.gid, mode: 0o751 },
      { p: path.join(root, 'www', 'nobody', 'site'), uid: nobody!.uid, gid: nobody!.gid, mode: 0o2750 },
      { p: dir, uid: nobody!.uid, gid: nobody!.gid, mode: 0o2750 },
    ];
    expect(await owners()).toEqual(want);
    // A home of the older layout (the user's own, 0755) is mended; the dirs inside are left as they are.
    await fs.chown(path.join(root, 'www', 'nobody'), nobody!.uid, nobody!.gid);
    await fs.chmod(path.join(root, 'www', 'nobody'), 0o755);
    expect(await ensureWebspaceDir(server, 'nobody', '/site/public/')).toBe(dir);
    expect(await owners()).toEqual(want);
    // A user that does not exist: dirs stay the worker's.
    const st = await fs.stat(await ensureWebspaceDir(server, 'hp_nosuchuser', '/a/'));
    expect(st.uid).toBe(0);
  });

  it('writeMarker writes the token at the returned URL path; removeMarker removes it, twice is fine', async () => {
    const dir = await ensureWebspaceDir(server, USER, '/site/');
    const token = crypto.randomBytes(12).toString('hex');
    const urlPath = await writeMarker(dir, token);
    expect(urlPath).toBe(`/.hostplane-probe-${token}.txt`);
    expect(await fs.readFile(path.join(dir, urlPath), 'utf8')).toBe(token);
    expect(await fs.readdir(dir)).toEqual([`.hostplane-probe-${token}.txt`]);
    await removeMarker(dir, token);
    expect(await fs.readdir(dir)).toEqual([]);
    await removeMarker(dir, token);
  });

  it('writeMarker never writes through a symlink planted at its name; a bad token is refused', async () => {
    const dir = await ensureWebspaceDir(server, USER, '/planted/');
    const victim = path.join(root, 'victim.txt');
    await fs.writeFile(victim, 'untouched');
    await fs.symlink(victim, path.join(dir, '.hostplane-probe-tok.txt'));
    expect(await writeMarker(dir, 'tok')).toBe('/.hostplane-probe-tok.txt');
    expect(await fs.readFile(victim, 'utf8')).toBe('untouched');
    expect((await fs.lstat(path.join(dir, '.hostplane-probe-tok.txt'))).isFile()).toBe(true);
    await removeMarker(dir, 'tok');

    for (const bad of ['', '../x', 'a/b', 'a b', 'x'.repeat(129)]) {
      await expect(writeMarker(dir, bad)).rejects.toThrow('marker token must be 1–128 characters of A-Z a-z 0-9 _ -');
    }
    expect(await fs.readdir(dir)).toEqual([]);
  });
});
