// The Caddy part of the web driver (API guide "Subdomains"; docs/decisions/0008-web-servers.md):
// the whole config as caddyConfig() builds it, then a private caddy loaded through CaddyClient and
// asked through HTTP(S) with each site's Host, as a browser would: redirects (static, dynamic,
// `$ { }` kept literal, redirect_to_https), webspaces (files, index.html, no PHP source, the
// fastcgi config), 404 for unknown hosts and e-mail sites, on-demand TLS with an `ask` endpoint,
// and ensure() loading only what differs, once per burst, again after a restart, never a refused
// config. Skipped without caddy, failed under CI_REQUIRE_ALL=1.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { caddyConfig, escapeTarget, splitListen } from '../../../src/provisioning/web/caddy-config.js';
import { CaddyClient } from '../../../src/provisioning/web/caddy-client.js';
import { probeSite } from '../../../src/provisioning/web/probe.js';
import type { SiteSpec, WebServerConn } from '../../../src/provisioning/web/sites.js';
import {
  requireCaddy,
  startAskServer,
  startCountingProxy,
  startPrivateCaddy,
  tlsHandshake,
  type AskServer,
  type PrivateCaddy,
} from '../../helpers/caddy.js';

const SERVER: WebServerConn = {
  name: 'web1',
  caddyAdmin: 'http://127.0.0.1:2019',
  httpListen: '0.0.0.0:80',
  httpsListen: '0.0.0.0:443',
  homeRoot: '/srv/www',
  stateDir: '/srv/www/.hostplane',
  php: { '8.2': '/usr/sbin/php-fpm8.2' },
};

/** The same object with every object's keys in reverse order (arrays keep theirs). */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversedKeys(x)]));
}

describe('caddyConfig: the whole Caddy config of a web server (API guide "Subdomains")', () => {
  it('admin, hp with one route per site and a final 404, hps with on-demand TLS; e-mail sites get no route', () => {
    const sites: SiteSpec[] = [
      { id: '7', host: 'shop.example.com', kind: 'redirect', target: 'https://t.example/base/', dynamic: true, https: true },
      { id: '8', host: 'mail.example.com', kind: 'email' },
      { id: '9', host: 'a.example.com', kind: 'redirect', target: 'https://t.example/{x}$1', dynamic: false, https: false },
    ];
    const notFound = { handle: [{ handler: 'static_response', status_code: 404, body: 'Not found\n' }], terminal: true };
    const dynamic = { handler: 'static_response', status_code: 301, headers: { Location: ['https://t.example/base{http.request.uri}'] } };
    const literal = { handler: 'static_response', status_code: 301, headers: { Location: ['https://t.example/%7Bx%7D%241'] } };
    expect(caddyConfig(SERVER, sites, { askUrl: 'http://127.0.0.1:8080/internal/tls-allowed', tls: 'acme' })).toEqual({
      admin: { listen: '127.0.0.1:2019' },
      apps: {
        http: {
          servers: {
            hp: {
              listen: ['0.0.0.0:80'],
              automatic_https: { disable: true },
              routes: [
                { '@id': 'hp-sd-9', match: [{ host: ['a.example.com'] }], handle: [literal], terminal: true },
                {
                  '@id': 'hp-sd-7',
                  match: [{ host: ['shop.example.com'] }],
                  handle: [{ handler: 'static_response', status_code: 301, headers: { Location: ['https://shop.example.com{http.request.uri}'] } }],
                  terminal: true,
                },
                notFound,
              ],
            },
            hps: {
              listen: ['0.0.0.0:443'],
              automatic_https: { disable: true },
              tls_connection_policies: [{}],
              routes: [
                { '@id': 'hps-sd-9', match: [{ host: ['a.example.com'] }], handle: [literal], terminal: true },
                { '@id': 'hps-sd-7', match: [{ host: ['shop.example.com'] }], handle: [dynamic], terminal: true },
                notFound,
              ],
            },
          },
        },
        tls: {
          automation: {
            policies: [{ on_demand: true, issuers: [{ module: 'acme' }] }],
            on_demand: { ask: 'http://127.0.0.1:8080/internal/tls-allowed' },
          },
        },
      },
    });
  });

  it('the same sites in any order give byte-identical JSON', () => {
    const sites: SiteSpec[] = [
      { id: '1', host: 'b.example.com', kind: 'webspace', root: '/srv/www/u1/b/', phpSocket: '/run/u1.sock', https: false },
      { id: '2', host: 'a.example.com', kind: 'redirect', target: 'https://t.example/', dynamic: false, https: true },
      { id: '3', host: 'c.example.com', kind: 'email' },
    ];
    const opts = { askUrl: 'http://127.0.0.1:1/ask', tls: 'internal' } as const;
    const one = JSON.stringify(caddyConfig(SERVER, sites, opts));
    expect(JSON.stringify(caddyConfig(SERVER, [...sites].reverse(), opts))).toBe(one);
    expect(JSON.stringify(caddyConfig(SERVER, [sites[1]!, sites[2]!, sites[0]!], opts))).toBe(one);
  });

  it('without an https listen address: no hps, no tls app; redirect_to_https goes to port 443', () => {
    const server = { ...SERVER, httpListen: '[::]:8080', httpsListen: null };
    const cfg = caddyConfig(server, [{ id: '1', host: 'a.example.com', kind: 'redirect', target: 'https://t.example/', dynamic: false, https: true }], { askUrl: null, tls: 'acme' }) as {
      apps: Record<string, { servers: Record<string, { listen: string[]; routes: Array<{ handle: unknown[] }> }> }>;
    };
    expect(Object.keys(cfg.apps)).toEqual(['http']);
    expect(Object.keys(cfg.apps.http!.servers)).toEqual(['hp']);
    expect(cfg.apps.http!.servers.hp!.listen).toEqual(['[::]:8080']);
    expect(cfg.apps.http!.servers.hp!.routes[0]!.handle).toEqual([
      { handler: 'static_response', status_code: 301, headers: { Location: ['https://a.example.com{http.request.uri}'] } },
    ]);
  });

  it('internal issuer: the local CA never installs its root into the system; no ask URL: no on_demand block', () => {
    const cfg = caddyConfig(SERVER, [], { askUrl: null, tls: 'internal' }) as { apps: Record<string, unknown> };
    expect(cfg.apps.tls).toEqual({ automation: { policies: [{ on_demand: true, issuers: [{ module: 'internal' }] }] } });
    expect(cfg.apps.pki).toEqual({ certificate_authorities: { local: { install_trust: false } } });
  });

  it('webspace roots and sockets are kept literal (Caddy expands `{…}` there)', () => {
    const cfg = JSON.stringify(
      caddyConfig(SERVER, [{ id: '1', host: 'a.example.com', kind: 'webspace', root: '/srv/www/u1/{x}/', phpSocket: '/run/{y}.sock', https: false }], { askUrl: null, tls: 'acme' }),
    );
    expect(cfg).toContain(JSON.stringify('/srv/www/u1/\\{x\\}/'));
    expect(cfg).toContain(JSON.stringify('unix//run/\\{y\\}.sock'));
    expect(cfg).not.toContain('"/srv/www/u1/{x}/"');
  });

  it('two sites with the same id are refused (Caddy would refuse the whole config)', () => {
    const site: SiteSpec = { id: '1', host: 'a.example.com', kind: 'email' };
    expect(() => caddyConfig(SERVER, [site, { ...site, host: 'b.example.com' }], { askUrl: null, tls: 'acme' })).toThrow('two sites with the id "1"');
  });

  it('escapeTarget percent-encodes $ { } only; splitListen reads host:port', () => {
    expect(escapeTarget('https://t.example/a{b}/$c?d=%7B')).toBe('https://t.example/a%7Bb%7D/%24c?d=%7B');
    expect(splitListen('0.0.0.0:80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(splitListen('[::]:443')).toEqual({ host: '::', port: 443 });
    expect(splitListen(':8080')).toEqual({ host: '', port: 8080 });
    expect(() => splitListen('localhost')).toThrow('invalid listen address');
  });
});

requireCaddy()('Caddy answers as configured (API guide "Subdomains"; docs/decisions/0008-web-servers.md)', () => {
  let caddy: PrivateCaddy;
  let ask: AskServer;
  let client: CaddyClient;
  let siteRoot: string;
  let phpRoot: string;
  let sites: SiteSpec[];
  let httpsPort: number;

  // Hosts the `ask` endpoint allows a certificate for; any other host gets no TLS handshake.
  const ALLOWED = ['secure-redirect.example.com', 'secure-www.example.com', 'www.example.com'];
  const desired = (list: SiteSpec[] = sites) => caddyConfig(caddy.server, list, { askUrl: ask.url, tls: 'internal' });
  const get = (host: string, p = '/', https = false) => probeSite(caddy.server, host, p, { https });
  const redirectTo = (location: string) => ({ status: 301, location, body: '' });

  beforeAll(async () => {
    caddy = await startPrivateCaddy();
    ask = await startAskServer(ALLOWED);
    client = new CaddyClient(caddy.server.caddyAdmin);
    httpsPort = splitListen(caddy.server.httpsListen!).port;
    siteRoot = path.join(caddy.server.homeRoot, 'u1', 'site');
    phpRoot = path.join(caddy.server.homeRoot, 'u1', 'php');
    await fs.mkdir(path.join(siteRoot, 'sub'), { recursive: true });
    await fs.mkdir(path.join(siteRoot, 'empty'), { recursive: true });
    await fs.writeFile(path.join(siteRoot, 'index.html'), '<p>home</p>\n');
    await fs.writeFile(path.join(siteRoot, 'file.txt'), 'a file\n');
    await fs.writeFile(path.join(siteRoot, 'sub', 'index.html'), '<p>sub</p>\n');
    await fs.writeFile(path.join(siteRoot, 'secret.php'), '<?php echo "secret source";');
    await fs.mkdir(phpRoot, { recursive: true });
    await fs.writeFile(path.join(phpRoot, 'index.php'), '<?php echo "php source";');
    await fs.writeFile(path.join(phpRoot, 'style.css'), 'body{}\n');
    sites = [
      { id: '1', host: 'static.example.com', kind: 'redirect', target: 'https://t.example/landing?from=hp', dynamic: false, https: false },
      { id: '2', host: 'dynamic.example.com', kind: 'redirect', target: 'https://t.example/base/', dynamic: true, https: false },
      { id: '3', host: 'braces.example.com', kind: 'redirect', target: 'https://t.example/p$1/{http.request.host}/x', dynamic: false, https: false },
      { id: '4', host: 'braces-dynamic.example.com', kind: 'redirect', target: 'https://t.example/{env.HOME}/$x/', dynamic: true, https: false },
      { id: '5', host: 'secure-redirect.example.com', kind: 'redirect', target: 'https://t.example/base/', dynamic: true, https: true },
      { id: '6', host: 'www.example.com', kind: 'webspace', root: siteRoot, phpSocket: null, https: false },
      { id: '7', host: 'secure-www.example.com', kind: 'webspace', root: siteRoot, phpSocket: null, https: true },
      { id: '8', host: 'php.example.com', kind: 'webspace', root: phpRoot, phpSocket: path.join(caddy.dir, 'no-such-pool.sock'), https: false },
      { id: '9', host: 'mail.example.com', kind: 'email' },
      { id: '10', host: 'xn--bcher-kva.example.com', kind: 'redirect', target: 'https://xn--bcher-kva.example/', dynamic: false, https: false },
    ];
  });

  afterAll(async () => {
    await ask?.close();
    await caddy?.stop();
  });

  // Every test starts from the fixture config (a no-op when Caddy already runs it).
  beforeEach(async () => {
    await client.ensure(desired());
  });

  it('static redirect: every path and query → 301 with exactly the target', async () => {
    for (const p of ['/', '/a/b', '/a?x=1', '/index.php', '/a%20b/']) {
      expect({ p, ...(await get('static.example.com', p)) }).toEqual({ p, ...redirectTo('https://t.example/landing?from=hp') });
    }
    expect(await get('xn--bcher-kva.example.com', '/x')).toEqual(redirectTo('https://xn--bcher-kva.example/'));
  });

  it('dynamic redirect: target + the path without its leading / + the query; / → exactly the target', async () => {
    const cases: Array<[string, string]> = [
      ['/', 'https://t.example/base/'],
      ['/a/b?x=1', 'https://t.example/base/a/b?x=1'],
      ['/a/b/', 'https://t.example/base/a/b/'],
      ['/?q=1&r=2', 'https://t.example/base/?q=1&r=2'],
      ['/a%20b?c=%7B', 'https://t.example/base/a%20b?c=%7B'],
    ];
    for (const [p, location] of cases) expect({ p, ...(await get('dynamic.example.com', p)) }).toEqual({ p, ...redirectTo(location) });
  });

  it('$ { } in a target stay literal: percent-encoded, never read as placeholders', async () => {
    expect(await get('braces.example.com', '/z?y=1')).toEqual(redirectTo('https://t.example/p%241/%7Bhttp.request.host%7D/x'));
    expect(decodeURIComponent((await get('braces.example.com')).location!)).toBe('https://t.example/p$1/{http.request.host}/x');
    expect(await get('braces-dynamic.example.com', '/a?b=1')).toEqual(redirectTo('https://t.example/%7Benv.HOME%7D/%24x/a?b=1'));
    expect(await get('braces-dynamic.example.com', '/')).toEqual(redirectTo('https://t.example/%7Benv.HOME%7D/%24x/'));
  });

  it('redirect_to_https on a redirect: plain HTTP → 301 to the same URL on https; over https the redirect itself', async () => {
    const host = 'secure-redirect.example.com';
    expect(await get(host, '/a/b?x=1')).toEqual(redirectTo(`https://${host}:${httpsPort}/a/b?x=1`));
    expect(await get(host, '/')).toEqual(redirectTo(`https://${host}:${httpsPort}/`));
    expect(await get(host, '/a/b?x=1', true)).toEqual(redirectTo('https://t.example/base/a/b?x=1'));
    expect(await get(host, '/', true)).toEqual(redirectTo('https://t.example/base/'));
  });

  it('webspace: files, index.html for directories, a directory without its / redirected, missing → 404', async () => {
    const host = 'www.example.com';
    expect(await get(host, '/')).toEqual({ status: 200, location: null, body: '<p>home</p>\n' });
    expect(await get(host, '/?x=1')).toEqual({ status: 200, location: null, body: '<p>home</p>\n' });
    expect(await get(host, '/file.txt')).toEqual({ status: 200, location: null, body: 'a file\n' });
    expect(await get(host, '/sub/')).toEqual({ status: 200, location: null, body: '<p>sub</p>\n' });
    expect(await get(host, '/sub')).toMatchObject({ status: 308, location: '/sub/' });
    expect(await get(host, '/missing.html')).toMatchObject({ status: 404, location: null });
    expect(await get(host, '/empty/')).toMatchObject({ status: 404, location: null }); // no listing
    expect(await get(host, '/../../../etc/passwd')).toMatchObject({ status: 404 });
  });

  it('webspace without a PHP pool: *.php answers 404, never the source', async () => {
    for (const p of ['/secret.php', '/SECRET.PHP', '/secret.php?x=1', '/missing.php']) {
      expect({ p, ...(await get('www.example.com', p)) }).toEqual({ p, status: 404, location: null, body: 'Not found\n' });
    }
  });

  it('webspace with a PHP pool: Caddy accepts the fastcgi config; *.php and a directory index.php go to the pool (502 while it does not run)', async () => {
    const host = 'php.example.com';
    for (const p of ['/index.php', '/', '/INDEX.PHP', '/no-such-page']) {
      const answer = await get(host, p);
      expect({ p, status: answer.status, source: answer.body.includes('php source') }).toEqual({ p, status: 502, source: false });
    }
    expect(await get(host, '/style.css')).toEqual({ status: 200, location: null, body: 'body{}\n' });
  });

  it('redirect_to_https on a webspace: plain HTTP → https, same URL; over https the files', async () => {
    const host = 'secure-www.example.com';
    expect(await get(host, '/sub/?a=b')).toEqual(redirectTo(`https://${host}:${httpsPort}/sub/?a=b`));
    expect(await get(host, '/file.txt', true)).toEqual({ status: 200, location: null, body: 'a file\n' });
    expect(await get(host, '/secret.php', true)).toEqual({ status: 404, location: null, body: 'Not found\n' });
  });

  it('an unknown host and an e-mail site answer 404, not an empty 200', async () => {
    for (const host of ['unknown.example.com', 'mail.example.com', 'example.com', '127.0.0.1']) {
      expect({ host, ...(await get(host, '/')) }).toEqual({ host, status: 404, location: null, body: 'Not found\n' });
    }
  });

  it('HTTPS on demand: a host the ask endpoint allows gets a certificate for its name from the internal CA and its answer', async () => {
    const ca = await fs.readFile(path.join(caddy.dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'), 'utf8');
    const cert = await tlsHandshake(caddy.server.httpsListen!, 'www.example.com', ca);
    expect(cert).toEqual({ subjectaltname: 'DNS:www.example.com', issuer: expect.stringContaining('Caddy Local Authority') });
    expect(ask.asked).toContain('www.example.com');
    expect(await get('www.example.com', '/file.txt', true)).toEqual({ status: 200, location: null, body: 'a file\n' });
  });

  it('HTTPS on demand: a host the ask endpoint refuses fails the TLS handshake (configured or not)', async () => {
    for (const host of ['static.example.com', 'unknown.example.com']) {
      await expect(get(host, '/', true), host).rejects.toThrow(/probe of https:\/\/.* failed/);
      expect(ask.asked).toContain(host);
    }
  });

  it('ensure() loads only when the config differs, whatever the order of object keys', async () => {
    const changed = desired([...sites, { id: '99', host: 'new.example.com', kind: 'redirect', target: 'https://t.example/new', dynamic: false, https: false }]);
    expect(await client.ensure(changed)).toBe(true);
    expect(await get('new.example.com')).toEqual(redirectTo('https://t.example/new'));
    expect(await client.ensure(changed)).toBe(false);
    expect(await client.ensure(reversedKeys(changed) as object)).toBe(false);
    expect(await client.ensure(desired())).toBe(true);
    expect(await get('new.example.com')).toMatchObject({ status: 404 });
  });

  it('a burst of 20 ensure() calls loads at most twice, and the last config wins', async () => {
    const proxy = await startCountingProxy(caddy.server.caddyAdmin);
    try {
      const counted = new CaddyClient(proxy.url);
      const burst = Array.from({ length: 20 }, (_, i) =>
        desired([...sites, { id: 'b', host: 'burst.example.com', kind: 'redirect', target: `https://t.example/burst-${i}`, dynamic: false, https: false }]),
      );
      const results = await Promise.all(burst.map((cfg) => counted.ensure(cfg)));
      const loads = proxy.requests.filter((r) => r === 'POST /load').length;
      expect({ loads: loads >= 1 && loads <= 2, results: results.every((r) => r === true) }).toEqual({ loads: true, results: true });
      expect(await get('burst.example.com')).toEqual(redirectTo('https://t.example/burst-19'));

      // The same new config 20 times: one load, the others find it there.
      proxy.requests.length = 0;
      const same = desired([...sites, { id: 'b', host: 'burst.example.com', kind: 'redirect', target: 'https://t.example/same', dynamic: false, https: false }]);
      const sameResults = await Promise.all(Array.from({ length: 20 }, () => counted.ensure(same)));
      expect(proxy.requests.filter((r) => r === 'POST /load')).toEqual(['POST /load']);
      expect(sameResults.filter(Boolean)).toHaveLength(1);
      expect(await get('burst.example.com')).toEqual(redirectTo('https://t.example/same'));
    } finally {
      await proxy.close();
    }
  });

  it('given a builder, a burst of 20 ensure() calls builds the config at most twice, from the state of the last caller', async () => {
    let target = '';
    let builds = 0;
    const build = async () => {
      builds++;
      return desired([...sites, { id: 'b', host: 'built.example.com', kind: 'redirect', target, dynamic: false, https: false }]);
    };
    const calls = Array.from({ length: 20 }, (_, i) => {
      target = `https://t.example/built-${i}`; // each caller's change is in place before it calls
      return client.ensure(build);
    });
    await Promise.all(calls);
    expect(builds).toBeGreaterThanOrEqual(1);
    expect(builds).toBeLessThanOrEqual(2);
    expect(await get('built.example.com')).toEqual(redirectTo('https://t.example/built-19'));
  });

  it('a config Caddy refuses: ensure() throws with its status and message, the old config keeps serving', async () => {
    const bad = desired() as { apps: { http: { servers: { hp: { routes: object[] } } } } };
    bad.apps.http.servers.hp.routes.unshift({ match: [{ host: ['bad.example.com'] }], handle: [{ handler: 'no_such_handler' }] });
    await expect(client.ensure(bad)).rejects.toThrow(/^Caddy at http:\/\/127\.0\.0\.1:\d+ refused the configuration \(HTTP 400\): .*no_such_handler/);
    expect(await get('static.example.com', '/a')).toEqual(redirectTo('https://t.example/landing?from=hp'));
    expect(await client.ensure(desired())).toBe(false);
  });

  it('after caddy restarts without its config, ensure() loads it again and the sites answer', async () => {
    await caddy.restart(); // killed by PID, started with only the admin config
    await expect(get('static.example.com')).rejects.toThrow(/ECONNREFUSED/);
    expect(await client.current()).toEqual({ admin: { listen: new URL(caddy.server.caddyAdmin).host } });
    expect(await client.ensure(desired())).toBe(true);
    expect(await get('static.example.com', '/a')).toEqual(redirectTo('https://t.example/landing?from=hp'));
    expect(await get('secure-www.example.com', '/file.txt', true)).toEqual({ status: 200, location: null, body: 'a file\n' });
  });
});
