// /subdomains made real (API guide "Subdomains"; docs/decisions/0008-web-servers.md):
// through HTTP on both engines against the local stack (a private Caddy; PHP-FPM started by the
// worker), each kind answers a browser as configured — static and dynamic redirects with paths
// and query strings, redirect_to_https, a static file and PHP from the webspace, 404 for a host
// that is not ours and for an e-mail-only subdomain — dig answers the subdomain's records and
// stops after DELETE, a Caddy that restarted and a PHP-FPM master that died get their sites back, and a symlink that leads out of
// the home is refused.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { jobDone } from '../../helpers/jobs.js';
import { digMissing, runDig, section, status } from '../../helpers/dns.js';
import { requirable } from '../../helpers/required.js';
import { stackMissing } from '../../helpers/stack.js';
import { PHP_VERSION, browse, patchSubdomain, postSubdomain, useSubdomainsSuite } from '../../helpers/subdomains.js';
import { pollUntil } from '../../helpers/wait.js';
import { versionPaths } from '../../../src/provisioning/web/php-fpm-files.js';

const missing = stackMissing() ?? digMissing();

requirable(missing)('subdomains on a real web server', () => {
  describe.each(ENGINES)('on %s', { timeout: 90_000 }, (engine) => {
    const s = useSubdomainsSuite(engine);
    const dig = (...args: string[]) => runDig(s.t.dns!.port!, ...args);
    /** POST and wait until its job is done: the 202's subdomain. */
    const created = async (token: string, attributes: Record<string, unknown>) => {
      const r = await postSubdomain(s.t, token, attributes);
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token, r);
      return r.json.data;
    };
    const patched = async (token: string, id: string, attributes: Record<string, unknown>) => {
      const r = await patchSubdomain(s.t, token, id, attributes);
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, token, r);
      return r.json.data;
    };

    it('a static redirect: 202 with the subdomain; when its job is done every request gets exactly the target, and DNS answers A and MX', async () => {
      const c = await s.customer();
      const r = await postSubdomain(s.t, c.token, { subdomain_type: 'redirect', domain: c.domain, subdomain: 'go', redirect: { target: 'https://target.example/landing?from=go' } });
      expect(r.status, r.body).toBe(202);
      const id = r.json.data.id;
      expect(r.json).toEqual({
        data: {
          type: 'subdomain',
          id: expect.stringMatching(/^[0-9]+$/),
          attributes: {
            subdomain_type: 'redirect', description: '', domain: c.domain, subdomain: 'go', fqdn: `go.${c.domain}`, fqdn_ace: `go.${c.domain}`,
            webspace: null, redirect: { target: 'https://target.example/landing?from=go', dynamic: false, redirect_to_https: false }, created_at: expect.any(String),
          },
          relationships: { package: { data: { type: 'package', id: c.packageId } }, domain: { data: { type: 'domain', id: c.domain } } },
          links: { self: `${s.base}/subdomains/${id}`, 'queue-job': expect.stringMatching(new RegExp(`^${s.base}/queue-jobs/[0-9]+$`)) },
        },
        links: { self: `${s.base}/subdomains` },
      });
      expect(r.headers['content-location']).toBe(r.json.data.links['queue-job']);
      await jobDone(s.t, c.token, r);
      for (const p of ['/', '/a/b.html', '/x?y=1']) {
        expect(await browse(s.web, `go.${c.domain}`, p), p).toMatchObject({ status: 301, location: 'https://target.example/landing?from=go' });
      }
      expect(section(await dig(`go.${c.domain}`, 'A'), 'ANSWER')).toEqual([`go.${c.domain}. 3600 IN A 127.0.0.1`]);
      expect(section(await dig(`go.${c.domain}`, 'MX'), 'ANSWER')).toEqual([expect.stringMatching(new RegExp(`^go\\.${c.domain.replace(/\./g, '\\.')}\\. 3600 IN MX 10 `))]);
      // The records are listed like any record, tagged base; the SPF lets the subdomain's addresses send.
      const records = await call(s.t.app, 'GET', `/dns-records?filter[domain]=${c.domain}`, { token: c.token });
      expect(records.json.data.filter((d: any) => d.attributes.name === 'go').map((d: any) => [d.attributes.record_type, d.attributes.tags])).toEqual([['A', ['base']], ['MX', ['base']], ['TXT', ['base']]]);
      // A host that is not ours: 404, not an empty 200.
      expect(await browse(s.web, `nobody.${c.domain}`)).toMatchObject({ status: 404 });
    });

    it('a dynamic redirect keeps the path and query; redirect_to_https sends plain HTTP to https first, and HTTPS gets a certificate on demand', async () => {
      const c = await s.customer();
      await created(c.token, { subdomain_type: 'redirect', domain: c.domain, subdomain: 'old', redirect: { target: 'https://new.example/base/', dynamic: true } });
      const host = `old.${c.domain}`;
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 301, location: 'https://new.example/base/' });
      expect(await browse(s.web, host, '/a/b?x=1&y=%20')).toMatchObject({ status: 301, location: 'https://new.example/base/a/b?x=1&y=%20' });

      const sub = (await call(s.t.app, 'GET', `/subdomains?filter[domain]=${c.domain}`, { token: c.token })).json.data[0];
      await patched(c.token, sub.id, { redirect: { redirect_to_https: true } });
      const httpsPort = s.web.httpsListen!.slice(s.web.httpsListen!.lastIndexOf(':') + 1);
      expect(await browse(s.web, host, '/p?q=1')).toMatchObject({ status: 301, location: `https://${host}:${httpsPort}/p?q=1` });
      const secure = await browse(s.web, host, '/p?q=1', { https: true });
      expect(secure).toMatchObject({ status: 301, location: 'https://new.example/base/p?q=1', certNames: `DNS:${host}` });
      // A host that is no site of ours gets no certificate: the handshake fails.
      await expect(browse(s.web, `nobody.${c.domain}`, '/', { https: true })).rejects.toThrow();
    });

    it('a webspace serves its files and runs PHP as the package\'s pool; the directory is made, files stay when the kind changes', async () => {
      const c = await s.customer();
      const sub = await created(c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'www2', webspace: { path: 'htdocs/www2' } });
      expect(sub.attributes.webspace).toEqual({ path: '/htdocs/www2/', php_version: null, redirect_to_https: false });
      const dir = path.join(c.home, 'htdocs/www2');
      expect((await fs.stat(dir)).isDirectory()).toBe(true);
      await fs.writeFile(path.join(dir, 'index.html'), '<h1>hello</h1>\n');
      await fs.writeFile(path.join(dir, 'v.php'), '<?php echo PHP_VERSION;');
      await fs.writeFile(path.join(dir, 'escape.php'), '<?php var_dump(@file_get_contents("/etc/hostname"));');
      const host = `www2.${c.domain}`;
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: '<h1>hello</h1>\n' });
      const php = await browse(s.web, host, '/v.php');
      expect(php.status).toBe(200);
      expect(php.body.startsWith(`${PHP_VERSION}.`)).toBe(true);
      // open_basedir: the home only.
      expect(await browse(s.web, host, '/escape.php')).toMatchObject({ status: 200, body: 'bool(false)\n' });

      // webspace → redirect (API guide "Subdomains"): the site changes, the files stay.
      const r = await patched(c.token, sub.id, { redirect: { target: 'https://elsewhere.example/' } });
      expect(r.attributes).toMatchObject({ subdomain_type: 'redirect', webspace: null, redirect: { target: 'https://elsewhere.example/', dynamic: false, redirect_to_https: false } });
      expect(await browse(s.web, host, '/v.php')).toMatchObject({ status: 301, location: 'https://elsewhere.example/' });
      expect(await fs.readFile(path.join(dir, 'index.html'), 'utf8')).toBe('<h1>hello</h1>\n');
      // … and back: the same files are served again.
      await patched(c.token, sub.id, { webspace: { path: '/htdocs/www2/' } });
      expect(await browse(s.web, host, '/')).toMatchObject({ status: 200, body: '<h1>hello</h1>\n' });
    });

    it('an e-mail subdomain serves no site and has MX but no A; becoming a webspace gives it both', async () => {
      const c = await s.customer();
      const sub = await created(c.token, { subdomain_type: 'email', domain: c.domain, subdomain: 'mail2' });
      expect(sub.attributes).toMatchObject({ subdomain_type: 'email', webspace: null, redirect: null });
      const host = `mail2.${c.domain}`;
      expect(await browse(s.web, host)).toMatchObject({ status: 404 });
      expect(section(await dig(host, 'A'), 'ANSWER')).toEqual([]);
      expect(section(await dig(host, 'MX'), 'ANSWER')).toHaveLength(1);
      await patched(c.token, sub.id, { webspace: { path: '/' } });
      await fs.writeFile(path.join(c.home, 'index.html'), 'home\n');
      expect(await browse(s.web, host)).toMatchObject({ status: 200, body: 'home\n' });
      expect(section(await dig(host, 'A'), 'ANSWER')).toEqual([`${host}. 3600 IN A 127.0.0.1`]);
    });

    it('DELETE: 202 with the job; then the host answers 404, DNS no longer knows it, GET answers 404, the files stay', async () => {
      const c = await s.customer();
      const sub = await created(c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'gone', webspace: { path: '/gone/' } });
      await fs.writeFile(path.join(c.home, 'gone/index.html'), 'still here\n');
      const host = `gone.${c.domain}`;
      expect(await browse(s.web, host)).toMatchObject({ status: 200 });
      const d = await call(s.t.app, 'DELETE', `/subdomains/${sub.id}`, { token: c.token });
      expect(d.status, d.body).toBe(202);
      expect(d.json.data).toMatchObject({ type: 'queue-job', attributes: { job_type: 'subdomain', action: 'delete', status: 'pending' } });
      await jobDone(s.t, c.token, d);
      expect(await browse(s.web, host)).toMatchObject({ status: 404 });
      expect(status(await dig(host, 'A'))).toBe('NXDOMAIN');
      expect((await call(s.t.app, 'GET', `/subdomains/${sub.id}`, { token: c.token })).status).toBe(404);
      expect(await fs.readFile(path.join(c.home, 'gone/index.html'), 'utf8')).toBe('still here\n');
    });

    it('a Caddy that was killed and started again without its config gets its sites back', async () => {
      const c = await s.customer();
      await created(c.token, { subdomain_type: 'redirect', domain: c.domain, subdomain: 'back', redirect: { target: 'https://back.example/' } });
      const pidFile = path.join(s.dir, 'caddy/caddy.pid');
      const pid = Number(await fs.readFile(pidFile, 'utf8'));
      process.kill(pid, 'SIGKILL');
      await pollUntil(async () => { try { process.kill(pid, 0); return false; } catch { return true; } }, (gone) => gone, 'caddy to die');
      const { spawn } = await import('node:child_process');
      // As after a reboot: Caddy starts from its initial config (admin only), hostplane's sites gone.
      const caddyDir = path.join(s.dir, 'caddy');
      const child = spawn('caddy', ['run', '--config', path.join(caddyDir, 'initial.json'), '--pidfile', pidFile], {
        detached: true, stdio: 'ignore', env: { ...process.env, HOME: caddyDir, XDG_DATA_HOME: path.join(caddyDir, 'data'), XDG_CONFIG_HOME: path.join(caddyDir, 'config') },
      });
      child.unref();
      const answer = await pollUntil(() => browse(s.web, `back.${c.domain}`).catch(() => ({ status: 0, location: null })), (a) => a.status === 301, 'the site back after the restart', 30_000);
      expect(answer.location).toBe('https://back.example/');
    });

    it("a webspace whose PHP-FPM master died (a reboot of the web host) runs PHP again without a job", async () => {
      const c = await s.customer();
      await created(c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'php-back', webspace: { path: '/php-back/', php_version: PHP_VERSION } });
      await fs.writeFile(path.join(c.home, 'php-back/v.php'), '<?php echo "up";');
      const host = `php-back.${c.domain}`;
      expect(await browse(s.web, host, '/v.php')).toMatchObject({ status: 200, body: 'up' });
      const pid = Number(await fs.readFile(versionPaths(s.web.stateDir, PHP_VERSION).pid, 'utf8'));
      // Its workers too (its process group), as a reboot ends them: alone they would go on serving.
      process.kill(-pid, 'SIGKILL');
      await pollUntil(async () => { try { process.kill(pid, 0); return false; } catch { return true; } }, (gone) => gone, 'php-fpm to die');
      const answer = await pollUntil(() => browse(s.web, host, '/v.php').catch(() => ({ status: 0, body: '' })), (a) => a.status === 200, 'PHP back after its master died', 30_000);
      expect(answer).toMatchObject({ status: 200, body: 'up' });
    });

    it('a webspace path through a symbolic link that leads out of the home: the job fails and says why; nothing is served from outside', async () => {
      const c = await s.customer();
      await fs.mkdir(c.home, { recursive: true });
      await fs.symlink('/etc', path.join(c.home, 'etc-link'));
      const r = await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: 'evil', webspace: { path: '/etc-link/' } });
      expect(r.status, r.body).toBe(202);
      const url = String(r.headers['content-location']).replace(s.base, '');
      const job = await pollUntil(() => call(s.t.app, 'GET', url, { token: c.token }).then((x) => x.json.data.attributes), (a) => a.status !== 'pending', 'the job', 30_000);
      expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/leads outside the home/) });
      expect(await browse(s.web, `evil.${c.domain}`, '/hostname')).not.toMatchObject({ status: 200 });
    });
  });
});
