// The whole Caddy configuration of one web server, built from its sites: a pure function, loaded by
// CaddyClient.ensure() only when Caddy runs something else (docs/decisions/0008-web-servers.md).
// Servers `hp` (HTTP) and `hps` (on-demand TLS), one route per site, then a catch-all 404 (Caddy
// answers an unknown Host with an empty 200). Values from a site are kept literal: Caddy would
// expand `{…}` placeholders in them.
import type { SiteSpec, WebServerConn } from './sites.js';

export interface CaddyConfigOptions {
  /** On-demand TLS asks this URL (`?domain=<host>`) before getting a certificate; null: no check. */
  askUrl: string | null;
  /** Certificates from Caddy's own CA (tests, closed networks) or from ACME (production). */
  tls: 'internal' | 'acme';
  /** The ACME directory of `tls: 'acme'`; null: Caddy's default (Let's Encrypt). */
  acmeDirectory?: string | null;
  /** The API's site, when this Caddy also fronts the API (decision 0018 "One Caddy per host"). */
  apiFront?: ApiFront | null;
}

/** Where a node's lego writes its HTTP-01 files (decision 0018 "TLS from ACME"); Caddy serves them. */
export const NODE_ACME_WEBROOT = '/var/lib/hostplane-acme/webroot';

export interface ApiFront {
  /** PUBLIC_BASE_URL's host name, e.g. api.example.net. */
  host: string;
  /** Where the API listens on this host, e.g. 127.0.0.1:8080. */
  upstream: string;
  /** lego's HTTP-01 files for the node's own certificates (PostgreSQL's, …), served on port 80. */
  acmeWebroot: string;
}

/** Where redirect_to_https sends `host`: `https://host`, with the HTTPS port when it is not 443. */
export function httpsOrigin(server: Pick<WebServerConn, 'httpsListen'>, host: string): string {
  const port = server.httpsListen === null ? 443 : splitListen(server.httpsListen).port;
  return `https://${host}${port === 443 ? '' : `:${port}`}`;
}

/** `splitListen('[::]:443')` → { host: '::', port: 443 }; `':80'` → { host: '', port: 80 }. */
export function splitListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(listen);
  if (!m) throw new Error(`invalid listen address ${JSON.stringify(listen)}: expected host:port`);
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/** Percent-encodes what Caddy (`{ }`) or nginx (`$`) would read in a redirect target: `'https://t/a{b}$'` → `'https://t/a%7Bb%7D%24'`. */
export function escapeTarget(target: string): string {
  return target.replace(/[${}]/g, (c) => (c === '$' ? '%24' : c === '{' ? '%7B' : '%7D'));
}

/** A file-system path Caddy must not expand: `{` and `}` backslash-escaped. */
function literalPath(p: string): string {
  return p.replace(/[{}]/g, (c) => `\\${c}`);
}

/** `http://127.0.0.1:2019` → `127.0.0.1:2019` (the port made explicit). */
function adminListen(adminUrl: string): string {
  const url = new URL(adminUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}

const NOT_FOUND = { handler: 'static_response', status_code: 404, body: 'Not found\n' };

function redirect(status: 301 | 308, location: string) {
  return { handler: 'static_response', status_code: status, headers: { Location: [location] } };
}

/**
 * Location of a redirect site. Static: the target. Dynamic: the target without its final `/`,
 * then `{http.request.uri}` (path with its leading `/`, then `?query` when there is one), i.e. the
 * target + the path without its leading `/` + the query; `/` gives exactly the target. A dynamic
 * target without a final `/` (the API refuses those) gets the whole request URI appended.
 */
function redirectLocation(site: Extract<SiteSpec, { kind: 'redirect' }>): string {
  const target = escapeTarget(site.target);
  if (!site.dynamic) return target;
  return `${target.endsWith('/') ? target.slice(0, -1) : target}{http.request.uri}`;
}

/**
 * A webspace: PHP as Caddy's own `php_fastcgi` does it (a directory with an index.php without
 * its final `/` is redirected to it, missing files go to the index.php of the directory or
 * of the root, `*.php` to the pool), the rest from `file_server` with index.html. Without a pool,
 * `*.php` answers 404 (never its source).
 */
function webspaceRoutes(site: Extract<SiteSpec, { kind: 'webspace' }>): object[] {
  const root = literalPath(site.root);
  const files = { handler: 'file_server', root, index_names: ['index.html'] };
  if (site.phpSocket === null) {
    return [{ match: [{ path: ['*.php'] }], handle: [NOT_FOUND] }, { handle: [files] }];
  }
  return [
    {
      match: [{ file: { root, try_files: ['{http.request.uri.path}/index.php'] }, not: [{ path: ['*/'] }] }],
      handle: [redirect(308, '{http.request.orig_uri.path}/')],
    },
    {
      match: [
        {
          file: {
            root,
            try_files: ['{http.request.uri.path}', '{http.request.uri.path}/index.php', 'index.php'],
            split_path: ['.php'],
          },
        },
      ],
      handle: [{ handler: 'rewrite', uri: '{http.matchers.file.relative}' }],
    },
    {
      match: [{ path: ['*.php'] }],
      handle: [
        {
          handler: 'reverse_proxy',
          transport: { protocol: 'fastcgi', root, split_path: ['.php'] },
          upstreams: [{ dial: `unix/${literalPath(site.phpSocket)}` }],
        },
      ],
    },
    { handle: [files] },
  ];
}

/** What a site answers once the request is on the right scheme. */
function siteHandlers(site: Exclude<SiteSpec, { kind: 'email' }>): object[] {
  if (site.kind === 'redirect') return [redirect(301, redirectLocation(site))];
  return [{ handler: 'subroute', routes: webspaceRoutes(site) }];
}

/**
 * The API's routes: on HTTP, ACME's HTTP-01 files then a redirect to HTTPS; on HTTPS, the API
 * (Caddy adds X-Forwarded-For, which TRUST_PROXY lets the API read). `autoconfig.<domain>`, where
 * mail clients ask for their settings (decision 0022), goes to the API too, after the sites (a
 * customer's own site of that name wins), on HTTPS with a certificate on demand.
 */
function apiRoutes(front: ApiFront) {
  const match = [{ host: [front.host] }];
  const challenge = { match: [{ path: ['/.well-known/acme-challenge/*'] }], handle: [{ handler: 'file_server', root: literalPath(front.acmeWebroot) }] };
  const proxy = { handler: 'reverse_proxy', upstreams: [{ dial: front.upstream }] };
  // Go keeps Host out of the header map; Caddy's header matchers read it from the request.
  const autoconfig = [{ header_regexp: { Host: { pattern: AUTOCONFIG_HOST } } }];
  return {
    http: { '@id': 'hp-api', match, handle: [{ handler: 'subroute', routes: [challenge, { handle: [redirect(301, `https://${front.host}{http.request.uri}`)] }] }], terminal: true },
    https: { '@id': 'hps-api', match, handle: [proxy], terminal: true },
    autoconfigHttp: { '@id': 'hp-autoconfig', match: autoconfig, handle: [redirect(301, 'https://{http.request.host}{http.request.uri}')], terminal: true },
    autoconfigHttps: { '@id': 'hps-autoconfig', match: autoconfig, handle: [proxy], terminal: true },
  };
}

/** The hosts mail clients ask for their settings: `autoconfig.<domain>` (RE2, any letter case). */
export const AUTOCONFIG_HOST = '(?i)^autoconfig\\.';

/**
 * The whole config: `caddyConfig(server, sites, { askUrl: 'http://127.0.0.1:8080/internal/tls-allowed', tls: 'acme' })`.
 * Sites of kind `email` get no route. Routes are ordered by host, then id, so the same sites in
 * any order give byte-identical JSON. Throws when two sites share an id (Caddy would refuse the
 * whole config).
 */
export function caddyConfig(server: WebServerConn, sites: SiteSpec[], opts: CaddyConfigOptions): object {
  const ids = new Set<string>();
  for (const site of sites) {
    if (ids.has(site.id)) throw new Error(`two sites with the id ${JSON.stringify(site.id)}`);
    ids.add(site.id);
  }
  const served = sites
    .filter((s): s is Exclude<SiteSpec, { kind: 'email' }> => s.kind !== 'email')
    .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  // Plain HTTP to https on the same host and URI.
  const toHttps = (host: string) => redirect(301, `${httpsOrigin(server, host)}{http.request.uri}`);

  const route = (prefix: string, site: Exclude<SiteSpec, { kind: 'email' }>, handle: object[]) => ({
    '@id': `${prefix}-sd-${site.id}`,
    match: [{ host: [site.host] }],
    handle,
    terminal: true,
  });
  const catchAll = { handle: [NOT_FOUND], terminal: true };
  const api = opts.apiFront ? apiRoutes(opts.apiFront) : null;

  const servers: Record<string, object> = {
    hp: {
      listen: [server.httpListen],
      automatic_https: { disable: true },
      routes: [...(api ? [api.http] : []), ...served.map((s) => route('hp', s, s.https ? [toHttps(s.host)] : siteHandlers(s))), ...(api ? [api.autoconfigHttp] : []), catchAll],
    },
  };
  const apps: Record<string, object> = { http: { servers } };
  if (server.httpsListen !== null) {
    servers.hps = {
      listen: [server.httpsListen],
      automatic_https: { disable: true },
      tls_connection_policies: [{}],
      routes: [...(api ? [api.https] : []), ...served.map((s) => route('hps', s, siteHandlers(s))), ...(api ? [api.autoconfigHttps] : []), catchAll],
    };
    const issuer = opts.tls === 'internal' ? { module: 'internal' } : { module: 'acme', ...(opts.acmeDirectory ? { ca: opts.acmeDirectory } : {}) };
    apps.tls = {
      // The API's name gets its certificate at start, the sites' names at their first handshake.
      ...(opts.apiFront ? { certificates: { automate: [opts.apiFront.host] } } : {}),
      automation: {
        policies: [...(opts.apiFront ? [{ subjects: [opts.apiFront.host], issuers: [issuer] }] : []), { on_demand: true, issuers: [issuer] }],
        ...(opts.askUrl === null ? {} : { on_demand: { ask: opts.askUrl } }),
      },
    };
    // Caddy's own CA would otherwise install its root into the system's trust stores.
    if (opts.tls === 'internal') apps.pki = { certificate_authorities: { local: { install_trust: false } } };
  }
  return { admin: { listen: adminListen(server.caddyAdmin) }, apps };
}
