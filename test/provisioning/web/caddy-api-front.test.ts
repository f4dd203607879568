// One Caddy for the sites and the API (decision 0018 "One Caddy per host"): with an API front,
// the web server's config also serves the API's host name — plain HTTP redirected to HTTPS except
// ACME's HTTP-01 files of the node's own certificates, HTTPS proxied to the API with the client's
// address — and gets the API's certificate at start, not on demand; `autoconfig.<domain>` goes to
// the API too, after the sites (decision 0022). Checked on a private caddy.
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caddyConfig, type ApiFront } from '../../../src/provisioning/web/caddy-config.js';
import { CaddyClient } from '../../../src/provisioning/web/caddy-client.js';
import { probeSite } from '../../../src/provisioning/web/probe.js';
import type { SiteSpec } from '../../../src/provisioning/web/sites.js';
import { requireCaddy, startPrivateCaddy, tlsHandshake, type PrivateCaddy } from '../../helpers/caddy.js';

const SERVER = { name: 'web1', caddyAdmin: 'http://127.0.0.1:2019', httpListen: ':80', httpsListen: ':443', homeRoot: '/srv/www', stateDir: '/srv/www/.hostplane', php: {} };
const FRONT: ApiFront = { host: 'api.example.net', upstream: '127.0.0.1:8080', acmeWebroot: '/var/lib/hostplane-acme/webroot' };

describe('caddyConfig with an API front', () => {
  it("the API's routes come first on both servers; its name has a policy of its own and is automated; the sites keep on-demand", () => {
    const cfg = caddyConfig(SERVER, [], { askUrl: 'https://api.example.net/internal/tls-allowed', tls: 'acme', acmeDirectory: 'https://acme.example/dir', apiFront: FRONT }) as {
      apps: { http: { servers: Record<string, { routes: object[] }> }; tls: object };
    };
    expect(cfg.apps.http.servers.hp.routes[0]).toEqual({
      '@id': 'hp-api',
      match: [{ host: ['api.example.net'] }],
      handle: [
        {
          handler: 'subroute',
          routes: [
            { match: [{ path: ['/.well-known/acme-challenge/*'] }], handle: [{ handler: 'file_server', root: '/var/lib/hostplane-acme/webroot' }] },
            { handle: [{ handler: 'static_response', status_code: 301, headers: { Location: ['https://api.example.net{http.request.uri}'] } }] },
          ],
        },
      ],
      terminal: true,
    });
    expect(cfg.apps.http.servers.hps.routes[0]).toEqual({
      '@id': 'hps-api',
      match: [{ host: ['api.example.net'] }],
      handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '127.0.0.1:8080' }] }],
      terminal: true,
    });
    // Mail clients' autoconfig.<domain>: to HTTPS, then the API; last before the catch-all.
    const autoconfig = [{ header_regexp: { Host: { pattern: '(?i)^autoconfig\\.' } } }];
    expect(cfg.apps.http.servers.hp.routes.slice(1)).toEqual([
      { '@id': 'hp-autoconfig', match: autoconfig, handle: [{ handler: 'static_response', status_code: 301, headers: { Location: ['https://{http.request.host}{http.request.uri}'] } }], terminal: true },
      { handle: [{ handler: 'static_response', status_code: 404, body: 'Not found\n' }], terminal: true },
    ]);
    expect(cfg.apps.http.servers.hps.routes.slice(1)).toEqual([
      { '@id': 'hps-autoconfig', match: autoconfig, handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '127.0.0.1:8080' }] }], terminal: true },
      { handle: [{ handler: 'static_response', status_code: 404, body: 'Not found\n' }], terminal: true },
    ]);
    const issuer = { module: 'acme', ca: 'https://acme.example/dir' };
    expect(cfg.apps.tls).toEqual({
      certificates: { automate: ['api.example.net'] },
      automation: {
        policies: [{ subjects: ['api.example.net'], issuers: [issuer] }, { on_demand: true, issuers: [issuer] }],
        on_demand: { ask: 'https://api.example.net/internal/tls-allowed' },
      },
    });
  });

  it('without a front or a directory the config is what it was: no API route, the default ACME issuer', () => {
    const cfg = caddyConfig(SERVER, [], { askUrl: null, tls: 'acme' }) as { apps: { http: { servers: Record<string, { routes: object[] }> }; tls: object } };
    expect(cfg.apps.http.servers.hp.routes).toHaveLength(1);
    expect(cfg.apps.tls).toEqual({ automation: { policies: [{ on_demand: true, issuers: [{ module: 'acme' }] }] } });
  });
});

requireCaddy()('a Caddy fronting the API answers', () => {
  let caddy: PrivateCaddy;
  let api: http.Server;
  let webroot: string;
  const seen: { url: string; forwardedFor: string | undefined; proto: string | undefined }[] = [];

  beforeAll(async () => {
    caddy = await startPrivateCaddy();
    api = http.createServer((req, res) => {
      seen.push({ url: req.url!, forwardedFor: req.headers['x-forwarded-for'] as string | undefined, proto: req.headers['x-forwarded-proto'] as string | undefined });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`api ${req.url}`);
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    webroot = path.join(caddy.dir, 'webroot');
    await fs.mkdir(path.join(webroot, '.well-known/acme-challenge'), { recursive: true });
    await fs.writeFile(path.join(webroot, '.well-known/acme-challenge/tok3n'), 'tok3n.key-authorization');
    const front = { ...FRONT, upstream: `127.0.0.1:${(api.address() as AddressInfo).port}`, acmeWebroot: webroot };
    const site: SiteSpec = { id: '1', host: 'static.example.com', kind: 'redirect', target: 'https://t.example/', dynamic: false, https: false };
    // A customer's own site at an autoconfig name.
    const own: SiteSpec = { id: '2', host: 'autoconfig.own.example', kind: 'redirect', target: 'https://own.example/', dynamic: false, https: false };
    await new CaddyClient(caddy.server.caddyAdmin).ensure(caddyConfig(caddy.server, [site, own], { askUrl: null, tls: 'internal', apiFront: front }));
  });

  afterAll(async () => {
    if (api) await new Promise((r) => api.close(r));
    await caddy?.stop();
  });

  it('plain HTTP: the challenge file as it is, anything else → 301 to the same URL on https', async () => {
    expect(await probeSite(caddy.server, 'api.example.net', '/.well-known/acme-challenge/tok3n')).toEqual({ status: 200, location: null, body: 'tok3n.key-authorization' });
    expect(await probeSite(caddy.server, 'api.example.net', '/customers?x=1')).toEqual({ status: 301, location: 'https://api.example.net/customers?x=1', body: '' });
    expect(seen).toEqual([]);
  });

  it("HTTPS: the API's own certificate, the API's answer, the client's address forwarded; the sites still answer", async () => {
    const ca = await fs.readFile(path.join(caddy.dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'), 'utf8');
    expect(await tlsHandshake(caddy.server.httpsListen!, 'api.example.net', ca)).toEqual({ subjectaltname: 'DNS:api.example.net', issuer: expect.stringContaining('Caddy Local Authority') });
    expect(await probeSite(caddy.server, 'api.example.net', '/customers?x=1', { https: true })).toEqual({ status: 200, location: null, body: 'api /customers?x=1' });
    expect(seen).toEqual([{ url: '/customers?x=1', forwardedFor: '127.0.0.1', proto: 'https' }]);
    expect(await probeSite(caddy.server, 'static.example.com', '/')).toEqual({ status: 301, location: 'https://t.example/', body: '' });
  });

  it('autoconfig.<domain>: plain HTTP to https, HTTPS to the API with its Host; a site of that name wins', async () => {
    seen.length = 0;
    expect(await probeSite(caddy.server, 'autoconfig.shop.example', '/mail/config-v1.1.xml?emailaddress=a%40shop.example')).toEqual({
      status: 301, location: 'https://autoconfig.shop.example/mail/config-v1.1.xml?emailaddress=a%40shop.example', body: '',
    });
    expect(await probeSite(caddy.server, 'AutoConfig.Shop.Example', '/mail/config-v1.1.xml', { https: true })).toEqual({ status: 200, location: null, body: 'api /mail/config-v1.1.xml' });
    expect(seen).toEqual([{ url: '/mail/config-v1.1.xml', forwardedFor: '127.0.0.1', proto: 'https' }]);
    expect(await probeSite(caddy.server, 'autoconfig.own.example', '/')).toEqual({ status: 301, location: 'https://own.example/', body: '' });
    expect(await probeSite(caddy.server, 'notautoconfig.example', '/', { https: true })).toEqual({ status: 404, location: null, body: 'Not found\n' });
  });
});
