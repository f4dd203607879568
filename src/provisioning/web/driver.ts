// The web backend as job runs see it (API guide "Subdomains";
// docs/decisions/0008-web-servers.md): Caddy through its admin API (the whole desired config,
// loaded only when it differs, bursts coalesced), PHP-FPM pools per (Linux user, version), the
// webspace directories, and the probe that tells whether the web server answers a host as
// configured. One Caddy client and one PHP-FPM supervisor per web server, made on first use.
import { caddyConfig, type ApiFront } from './caddy-config.js';
import { CaddyClient } from './caddy-client.js';
import { PhpFpmSupervisor } from './php-fpm.js';
import { accepts } from './php-fpm-procs.js';
import { PhpFpmRegistry } from './php-fpm-registry.js';
import { probeSite, type ProbeAnswer } from './probe.js';
import type { SiteSpec, WebServerConn } from './sites.js';
import { authorizedKeysPath, writeAuthorizedKeys } from './ssh-keys.js';
import { ensureLinuxUser, ensureWebspaceDir, removeMarker, writeMarker } from './webspace-dirs.js';
import fs from 'node:fs/promises';

export interface WebDriverOptions {
  /** The on-demand TLS question (`GET <askUrl>?domain=<host>` → 200 for our hosts); null: no check. */
  askUrl: string | null;
  /** Certificates for on-demand TLS: Let's Encrypt & co. (`acme`) or Caddy's own CA (`internal`, tests). */
  tls: 'acme' | 'internal';
  /** Create a package's Linux user on the host when it is missing (WEB_CREATE_USERS; only as root). A local stack's private users are made either way. */
  createUsers?: boolean;
  /** The ACME directory of `acme`; null: Let's Encrypt. */
  acmeDirectory?: string | null;
  /** The API's site, when the web servers of this process also front the API (WEB_API_UPSTREAM). */
  apiFront?: ApiFront | null;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

export interface WebDriver {
  /**
   * Makes the web server serve exactly `sites` (its whole desired state); true when a new config
   * was loaded. Given as a function, the sites are read once per batch of concurrent applies.
   */
  apply(server: WebServerConn, sites: SiteSpec[] | (() => Promise<SiteSpec[]>)): Promise<boolean>;
  /** The socket of the pool of (Linux user, PHP version), started or reloaded when needed. */
  ensurePool(server: WebServerConn, linuxUser: string, version: string): Promise<string>;
  /** Whether that pool's socket takes a connection (its master runs). */
  poolAnswers(server: WebServerConn, linuxUser: string, version: string): Promise<boolean>;
  /** Where that pool's socket is (whether or not it runs yet). */
  poolSocket(server: WebServerConn, linuxUser: string, version: string): string;
  /** The webspace directory inside the home, created when missing; WebspaceEscapeError when it leads outside. */
  ensureDir(server: WebServerConn, linuxUser: string, path: string): Promise<string>;
  /** What the web server answers for `host` + `path` (plain HTTP, or HTTPS). */
  probe(server: WebServerConn, host: string, path?: string, https?: boolean): Promise<ProbeAnswer>;
  /** A marker file in a webspace directory for the probe: its URL path; and its removal. */
  writeMarker(dir: string, token: string): Promise<string>;
  removeMarker(dir: string, token: string): Promise<void>;
  /**
   * Makes the key file sshd reads for `linuxUser` hold exactly `keys` (API guide "SSH keys";
   * docs/decisions/0023-sftp.md); the user and its home are made as ensureDir makes them.
   */
  setSshKeys(server: WebServerConn, linuxUser: string, keys: string[]): Promise<void>;
  /** The keys in that file as sshd would read them (null: no file), to check a write. */
  sshKeys(server: WebServerConn, linuxUser: string): Promise<string[] | null>;
  close(): Promise<void>;
}

/** The keys of a key file, one per non-empty line. */
async function readKeys(file: string): Promise<string[] | null> {
  try {
    return (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** `const web = caddyWebDriver({ askUrl, tls: 'acme' })` … `await web.close()`. */
export function caddyWebDriver(opts: WebDriverOptions): WebDriver {
  const clients = new Map<string, CaddyClient>();
  const supervisors = new Map<string, PhpFpmSupervisor>();
  // Shared by every supervisor this driver makes, also across close(): calls that a job and the
  // reconciler make for one (state dir, PHP version) run one after the other.
  const registry = new PhpFpmRegistry();
  const caddy = (s: WebServerConn) => {
    let c = clients.get(s.caddyAdmin);
    if (!c) clients.set(s.caddyAdmin, (c = new CaddyClient(s.caddyAdmin)));
    return c;
  };
  const php = (s: WebServerConn) => {
    let p = supervisors.get(s.stateDir);
    if (!p) supervisors.set(s.stateDir, (p = new PhpFpmSupervisor(s, { registry, log: opts.log, listenGroup: s.socketGroup ?? undefined })));
    return p;
  };
  return {
    apply: (server, sites) => {
      const config = (list: SiteSpec[]) => caddyConfig(server, list, opts);
      return caddy(server).ensure(typeof sites === 'function' ? async () => config(await sites()) : config(sites));
    },
    ensurePool: async (server, user, version) => {
      await ensureLinuxUser(server, user, { system: opts.createUsers });
      return php(server).ensurePool(user, version);
    },
    poolSocket: (server, user, version) => php(server).socketPath(version, user),
    poolAnswers: (server, user, version) => accepts(php(server).socketPath(version, user)),
    ensureDir: async (server, user, path) => {
      await ensureLinuxUser(server, user, { system: opts.createUsers });
      return ensureWebspaceDir(server, user, path);
    },
    setSshKeys: async (server, user, keys) => {
      await ensureLinuxUser(server, user, { system: opts.createUsers });
      await ensureWebspaceDir(server, user, '/');
      await writeAuthorizedKeys(server, user, keys);
    },
    probe: (server, host, path = '/', https = false) => probeSite(server, host, path, { https }),
    writeMarker,
    removeMarker,
    sshKeys: (server, user) => readKeys(authorizedKeysPath(server, user)),
    // Caddy and the PHP-FPM masters run on: they serve the sites whether a worker runs or not.
    close: async () => {
      clients.clear();
      supervisors.clear();
    },
  };
}
