// Sites keep working through changes (API guide "Subdomains"; docs/decisions/0008-web-servers.md):
// on both engines against the local stack, a webspace's files — placed there or uploaded through
// its own PHP — are served again after a change of its PHP version, after a change of its path
// (the old directory stays on disk and is served again when the path goes back) and after a
// restart of the web host's processes (Caddy and PHP-FPM killed, Caddy started as up.sh starts
// it, PHP-FPM by the worker), without anyone doing anything.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { errorBody } from '../../helpers/errors.js';
import { jobDone } from '../../helpers/jobs.js';
import { PHP, stackMissing } from '../../helpers/stack.js';
import { requirable } from '../../helpers/required.js';
import { PHP_VERSION, browse, patchSubdomain, postSubdomain, useSubdomainsSuite, type SubdomainsSuite } from '../../helpers/subdomains.js';
import { pollUntil } from '../../helpers/wait.js';
import type { WebServerConn } from '../../../src/provisioning/web/sites.js';
import { versionPaths } from '../../../src/provisioning/web/php-fpm-files.js';

/** The PHP versions installed here, in order: with one, a version change is null → it → null. */
const INSTALLED = Object.keys(PHP).sort();

/** What a customer's PHP keeps of an upload: the file under uploads/, named as sent. */
const UPLOAD_PHP = `<?php
$f = $_FILES['file'];
@mkdir(__DIR__ . '/uploads');
if (!move_uploaded_file($f['tmp_name'], __DIR__ . '/uploads/' . basename($f['name']))) { http_response_code(500); exit('not kept'); }
echo 'kept ', basename($f['name']);
`;

/** A multipart POST of one file to the web server for `host`, as a browser's form sends it. */
function upload(web: WebServerConn, host: string, urlPath: string, name: string, content: string): Promise<{ status: number; body: string }> {
  const boundary = '----hostplane-test-boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  const port = Number(web.httpListen.slice(web.httpListen.lastIndexOf(':') + 1));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: urlPath, method: 'POST', agent: false, timeout: 10_000, headers: { host, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer for ${host}`)));
    req.on('error', reject);
    req.end(body);
  });
}

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

requirable(stackMissing())('sites keep working through changes', () => {
  describe.each(ENGINES)('on %s', { timeout: 90_000 }, (engine) => {
    const s: SubdomainsSuite = useSubdomainsSuite(engine);
    const accepted = async (r: Awaited<ReturnType<typeof postSubdomain>>, token: string) => {
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token, r);
      return r.json.data;
    };

    it('a change of the PHP version: every step serves the files, and PHP answers in the version asked for; a version not installed answers 422 and nothing changes', async () => {
      const c = await s.customer({ phpVersions: [...INSTALLED, '8.5'] });
      const sub = await accepted(await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'ver', webspace: { path: '/ver/' } }), c.token);
      const dir = path.join(c.home, 'ver');
      await fs.writeFile(path.join(dir, 'index.html'), 'static\n');
      await fs.writeFile(path.join(dir, 'v.php'), '<?php echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;');
      const host = `ver.${c.domain}`;
      // null is the package default: the plan's first installed version.
      expect(await browse(s.web, host, '/v.php')).toMatchObject({ status: 200, body: INSTALLED[0] });
      for (const version of [...INSTALLED.slice(1), INSTALLED[0], null]) {
        const data = await accepted(await patchSubdomain(s.t, c.token, sub.id, { webspace: { php_version: version } }), c.token);
        expect(data.attributes.webspace).toEqual({ path: '/ver/', php_version: version, redirect_to_https: false });
        expect(await browse(s.web, host, '/v.php'), `PHP ${version}`).toMatchObject({ status: 200, body: version ?? INSTALLED[0] });
        expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: 'static\n' });
      }
      // The plan offers 8.5, this web server has no PHP 8.5.
      const refused = await patchSubdomain(s.t, c.token, sub.id, { webspace: { php_version: '8.5' } });
      expect(refused.status, refused.body).toBe(422);
      expect(refused.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data',
        `PHP 8.5 is not available. This package can use PHP ${INSTALLED.join(', ')}, or null for the default (${INSTALLED[0]}).`,
        `${s.base}/subdomains/${sub.id}`, { pointer: '/data/attributes/webspace/php_version' }));
      expect((await call(s.t.app, 'GET', `/subdomains/${sub.id}`, { token: c.token })).json.data.attributes.webspace).toEqual({ path: '/ver/', php_version: null, redirect_to_https: false });
      expect(await browse(s.web, host, '/v.php')).toMatchObject({ status: 200, body: INSTALLED[0] });
    });

    it('a change of the path serves the new directory and leaves the old one on disk; changing back serves the old files again', async () => {
      const c = await s.customer();
      const sub = await accepted(await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'move', webspace: { path: '/site-a/', php_version: PHP_VERSION } }), c.token);
      const a = path.join(c.home, 'site-a');
      await fs.writeFile(path.join(a, 'index.html'), 'A\n');
      await fs.writeFile(path.join(a, 'which.php'), '<?php echo "A ", basename(__DIR__);');
      const host = `move.${c.domain}`;
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: 'A\n' });

      const moved = await accepted(await patchSubdomain(s.t, c.token, sub.id, { webspace: { path: 'site-b' } }), c.token);
      expect(moved.attributes.webspace).toEqual({ path: '/site-b/', php_version: PHP_VERSION, redirect_to_https: false });
      const b = path.join(c.home, 'site-b');
      expect((await fs.stat(b)).isDirectory()).toBe(true);
      // The new directory is what is served: A's files are not found there, B's are.
      expect(await browse(s.web, host, '/which.php')).toMatchObject({ status: 404 });
      await fs.writeFile(path.join(b, 'index.html'), 'B\n');
      await fs.writeFile(path.join(b, 'which.php'), '<?php echo "B ", basename(__DIR__);');
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: 'B\n' });
      expect(await browse(s.web, host, '/which.php')).toMatchObject({ status: 200, body: 'B site-b' });
      // Nothing of the old directory was deleted.
      expect((await fs.readdir(a)).sort()).toEqual(['index.html', 'which.php']);

      await accepted(await patchSubdomain(s.t, c.token, sub.id, { webspace: { path: '/site-a/' } }), c.token);
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: 'A\n' });
      expect(await browse(s.web, host, '/which.php')).toMatchObject({ status: 200, body: 'A site-a' });
      expect((await fs.readdir(b)).sort()).toEqual(['index.html', 'which.php']);
    });

    it('a restart of the web host\'s processes (Caddy and PHP-FPM killed, Caddy started as up.sh does): files and uploads are served again, PHP runs, without a job', async () => {
      const c = await s.customer();
      await accepted(await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'reboot', webspace: { path: '/reboot/', php_version: PHP_VERSION } }), c.token);
      const dir = path.join(c.home, 'reboot');
      await fs.writeFile(path.join(dir, 'index.html'), 'before\n');
      await fs.writeFile(path.join(dir, 'upload.php'), UPLOAD_PHP);
      const host = `reboot.${c.domain}`;
      expect(await upload(s.web, host, '/upload.php', 'notes.txt', 'uploaded through PHP\n')).toEqual({ status: 200, body: 'kept notes.txt' });
      expect(await browse(s.web, host, '/uploads/notes.txt')).toMatchObject({ status: 200, body: 'uploaded through PHP\n' });

      // As a reboot ends them: Caddy, and the PHP-FPM master with its workers (its process group).
      const caddyPidFile = path.join(s.dir, 'caddy/caddy.pid');
      const caddyPid = Number(await fs.readFile(caddyPidFile, 'utf8'));
      const fpmPid = Number(await fs.readFile(versionPaths(s.web.stateDir, PHP_VERSION).pid, 'utf8'));
      process.kill(caddyPid, 'SIGKILL');
      process.kill(-fpmPid, 'SIGKILL');
      await pollUntil(async () => gone(caddyPid) && gone(fpmPid), (x) => x, 'Caddy and PHP-FPM to die');
      // Caddy comes back as up.sh (or systemd) starts it: its initial config, admin only.
      const caddyDir = path.join(s.dir, 'caddy');
      spawn('caddy', ['run', '--config', path.join(caddyDir, 'initial.json'), '--pidfile', caddyPidFile], {
        detached: true, stdio: 'ignore', env: { ...process.env, HOME: caddyDir, XDG_DATA_HOME: path.join(caddyDir, 'data'), XDG_CONFIG_HOME: path.join(caddyDir, 'config') },
      }).unref();

      const upload2 = await pollUntil(
        () => upload(s.web, host, '/upload.php', 'after.txt', 'uploaded after the restart\n').catch(() => ({ status: 0, body: '' })),
        (a) => a.status === 200, 'PHP back after the restart', 30_000,
      );
      expect(upload2).toEqual({ status: 200, body: 'kept after.txt' });
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: 'before\n' });
      expect(await browse(s.web, host, '/uploads/notes.txt')).toMatchObject({ status: 200, body: 'uploaded through PHP\n' });
      expect(await browse(s.web, host, '/uploads/after.txt')).toMatchObject({ status: 200, body: 'uploaded after the restart\n' });
      expect(Number(await fs.readFile(versionPaths(s.web.stateDir, PHP_VERSION).pid, 'utf8'))).not.toBe(fpmPid);
    });
  });
});
