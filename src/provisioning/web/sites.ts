// What the web driver works with (API guide "Subdomains"; docs/decisions/0008-web-servers.md): a
// registered web server as its host sees it, and each subdomain reduced to what that server must
// answer for its host. Shared by the Caddy config builder, the admin client, the probe and the
// web worker.

/** A registered web server as the driver needs it. */
export interface WebServerConn {
  name: string;
  /** http://127.0.0.1:2019 — Caddy's admin API (loopback only). */
  caddyAdmin: string;
  /** host:port Caddy serves plain HTTP on, e.g. '0.0.0.0:80' or '127.0.0.1:18080'. */
  httpListen: string;
  /** host:port of HTTPS with on-demand TLS, or null for no HTTPS. */
  httpsListen: string | null;
  /** Absolute dir holding every package's home (`<homeRoot>/<linuxUser>`). */
  homeRoot: string;
  /** Absolute dir for hostplane's files on that host (PHP-FPM configs, sockets, pids). */
  stateDir: string;
  /** Installed PHP versions → php-fpm binary, e.g. { '8.2': '/usr/sbin/php-fpm8.2' }. */
  php: Record<string, string>;
  /** Group given the PHP-FPM sockets (mode 0660): Caddy's, when it runs as another user than the worker; null: the worker's. */
  socketGroup?: string | null;
}

/** One subdomain as the web server serves it. */
export type SiteSpec = {
  /** Subdomain id; the Caddy route's @id is `hp-sd-<id>`. */
  id: string;
  /** The host, ACE (xn--…) form, lower case: 'shop.example.com'. */
  host: string;
} & (
  | { kind: 'email' } // no site: the host answers like an unknown one (404)
  | { kind: 'redirect'; target: string; dynamic: boolean; https: boolean }
  | { kind: 'webspace'; root: string; phpSocket: string | null; https: boolean }
);
// An uninitialized redirect (no target yet) is given as { kind: 'email' } by the caller: no site.
