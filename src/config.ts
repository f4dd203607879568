// All settings, read from the environment once (docs/operator-guide.md "Settings"). One table
// (SETTINGS) describes the raw environment; every problem is collected and reported together, so an
// operator fixes a broken deployment in one round. Checked by hand, not by TypeBox: every command
// starts with this, and loading TypeBox's validator cost each start ~0.3 s (docs/performance.md
// "DNS side by side with NSD and PowerDNS").
import { parseHostPort } from './host-port.js';
import { isIP } from 'node:net';
import net from 'node:net';

/** A setting: any string, one matching `pattern`, or one of `values` (an empty value is no value). */
interface Setting<T extends string = string> {
  description: string;
  pattern?: string;
  values?: readonly T[];
}
const Str = (description: string, o: { pattern?: string } = {}): Setting => ({ description, ...o });
const Int = (description: string) => Str(description, { pattern: '^[0-9]+$' });
const OneOf = <T extends string>(values: readonly T[], description: string): Setting<T> => ({ description, values });

const SETTINGS = {
  PORT: Int('HTTP port [8080]'),
  HOST: Str('listen address [127.0.0.1 for the demo (DEMO_DATA on, or auto with the default database), else 0.0.0.0]'),
  DATABASE_URL: Str('file path (its directory must exist), sqlite: URL or postgres:// URL [./data/hostplane.db, its directory created]'),
  PUBLIC_BASE_URL: Str('absolute base of every link [http://localhost:<PORT>]', { pattern: '^https?://[^\\s]+$' }),
  API_VENDOR: Str('vendor word of the Accept version [hostplane]', { pattern: '^[a-z0-9][a-z0-9-]*$' }),
  REDIS_URL: Str('shared rate-limit store', { pattern: '^rediss?://' }),
  TRUST_PROXY: Str('comma-separated addresses/CIDRs of trusted proxies'),
  RATE_LIMIT_MAX: Int('requests per window per client [10]'),
  RATE_LIMIT_WINDOW_S: Int('sliding window in seconds [10]'),
  ERROR_BLOCK_MAX: Int('error responses that block a client [30]'),
  ERROR_BLOCK_WINDOW_S: Int('window for counting error responses [600]'),
  ERROR_BLOCK_DURATION_S: Int('how long a client stays blocked [900]'),
  DNS_LISTEN: Str('host:port of the DNS server, or off [127.0.0.1:5300]'),
  DNS_DEFAULT_TTL: Int('default TTL of DNS records [3600]'),
  DNS_NAMESERVERS: Str('comma-separated NS host names of every zone; the first is the SOA MNAME [ns1.hostplane.test,ns2.hostplane.test]'),
  DNS_HOSTMASTER: Str('SOA RNAME, as name or e-mail address [hostmaster.<domain of the first name server>]'),
  DNS_POLL_MS: Int('how often a DNS server checks for changes it was not told about [100]'),
  DNS_HEARTBEAT_MS: Int('how often a DNS server reports that it is alive [1000]'),
  DNS_SERVER_STALE_MS: Int('a DNS server silent for longer is not waited for [5000]'),
  DNS_SECONDARY_TIMEOUT_MS: Int('a DNS job fails when a registered secondary does not serve its change after this long [60000]'),
  DNS_UDP_BATCH: OneOf(['auto', 'on', 'off'], "UDP queries read and answered in batches by the native reader (recvmmsg/sendmmsg): auto (when it is built), on (fail at start when it is not), off (node's dgram) [auto]"),
  DNS_CATALOG_ZONE: Str('name of the catalog zone (RFC 9432) listing every zone for secondaries, or off [catalog.hostplane.invalid]'),
  DNS_DNSSEC: OneOf(['on', 'off'], 'whether a presence domain that has not chosen is signed with DNSSEC (docs/decisions/0032-dnssec.md) [off]'),
  DNS_DNSSEC_ALGORITHM: OneOf(['ecdsap256sha256', 'ed25519'], 'algorithm of new DNSSEC keys: 13 (ECDSA P-256) or 15 (Ed25519) [ecdsap256sha256]'),
  DNS_DNSSEC_VALIDITY_S: Int('how long a DNSSEC signature is valid [1209600: 14 days]'),
  DNS_DNSSEC_REFRESH_S: Int('a signed zone is signed again when its signatures have less than this left [604800: 7 days]'),
  DNS_DNSSEC_PARENT: Str('comma-separated host:port of DNS servers asked for a signed domain\'s DS (its parent\'s servers or a resolver); unset: the operator confirms with `hostplane admin domain dnssec ds-seen` [unset]'),
  DNS_DNSSEC_PROPAGATION_S: Int('DNSSEC key lifecycle: how long a change takes to reach every server and secondary, added to each TTL waited for [3600]'),
  DNS_DNSSEC_DS_TTL_S: Int("DNSSEC key lifecycle: the parent's DS TTL assumed while it is not asked (DNS_DNSSEC_PARENT unset) [86400]"),
  DNS_DNSSEC_ROLLOVER_DAYS: Int("a signed zone's key is rolled over (RFC 7583 timing) this many days after it became active; 0 = only by `hostplane admin domain dnssec rollover` [0]"),
  DNS_BASE_IPV4: Str('A record of a new presence domain (apex and www) unless its plan has a DNS template; off for none [192.0.2.10]'),
  DNS_BASE_IPV6: Str('AAAA record of a new presence domain (apex and www); off for none [2001:db8::10]'),
  DNS_BASE_MX: Str('mail server host of a new presence domain (MX 10; its SRV records for mail clients); off for none [mail.hostplane.test]'),
  DNS_BASE_AUTOCONFIG: Str("target of a new presence domain's autoconfig CNAME, the API's public host that answers mail clients; off for none [PUBLIC_BASE_URL's host, when it is a name with a dot]"),
  BRAND_WORDS: Str('comma-separated words forbidden in passwords [hostplane]'),
  LOG_LEVEL: OneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'log level [info]'),
  RDAP_SERVERS: Str('tld=url pairs, comma-separated; * for any other TLD [none]'),
  RDAP_TIMEOUT_MS: Int('timeout of one RDAP lookup [3000]'),
  BODY_LIMIT_BYTES: Int('largest request body [1048576]'),
  REQUEST_TIMEOUT_MS: Int('time to receive a whole request; also how long a connection may stay without traffic either way [10000]'),
  HEADERS_TIMEOUT_MS: Int('time to receive the request headers [5000]'),
  KEEP_ALIVE_TIMEOUT_MS: Int('idle keep-alive connection timeout [5000]'),
  JOB_CONCURRENCY: Int('jobs one worker runs at the same time [4]'),
  JOB_LEASE_MS: Int('how long a claimed job stays reserved without a heartbeat [30000 on PostgreSQL, 3000 on SQLite]'),
  JOB_MAX_ATTEMPTS: Int('runs of a failing job before it is marked failed [10]'),
  JOB_POLL_MS: Int('how often an idle worker looks for due jobs [200]'),
  WEB_SERVER: Str('name of the web server whose jobs this host runs (serve: besides the general jobs; worker: only those) [none]', { pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }),
  WEB_TLS_ISSUER: OneOf(['acme', 'internal'], "who issues the web servers' on-demand certificates: acme (Let's Encrypt) or internal (Caddy's own CA, for tests) [acme]"),
  ACME_DIRECTORY: Str("the ACME directory of the web servers' certificates with WEB_TLS_ISSUER=acme [Let's Encrypt's]", { pattern: '^https://[^\\s]+$' }),
  WEB_API_UPSTREAM: Str("host:port of this host's API, which the web server's Caddy then also serves at PUBLIC_BASE_URL's host (one Caddy for sites and API) [none]", { pattern: '^[^\\s/]+:[0-9]{1,5}$' }),
  WEB_CREATE_USERS: OneOf(['on', 'off'], "the web worker, as root, creates a package's Linux user when it is missing (a web node) [off]"),
  WEB_SFTP_LOG: Str("where the web worker reads sshd's logins of the packages' users, for the SSH keys' last use: journal (ssh.service's) or an absolute log file [none]", { pattern: '^(journal|/[^\\s]*)$' }),
  DEMO_DATA: OneOf(['auto', 'on', 'off'], 'load the demo dataset on a new database: auto = only for the embedded SQLite default [auto]'),
  DEMO_MARIADB_URL: Str('mysql://admin@host:port of a MariaDB/MySQL the demo dataset registers as its default database server [none]', { pattern: '^mysql://' }),
  WEBHOOK_ALLOW_CIDRS: Str("comma-separated addresses/CIDRs webhooks may be sent to although they are private, loopback or this host's; plain http:// is allowed there too [none]"),
  WEBHOOK_DENY_CIDRS: Str("comma-separated addresses/CIDRs webhooks are never sent to, besides the special ranges and this host's own addresses: the operator's other networks [none]"),
  WEBHOOK_SECRET_KEY: Str('comma-separated base64 keys of 32 bytes that seal the webhooks\' signing secrets and the panel\'s TOTP secrets in the store; the first seals, every one opens [a key kept in the store]'),
  WEBHOOK_TIMEOUT_MS: Int('time a webhook receiver has to answer a delivery [10000]'),
  IDEMPOTENCY_KEY_TTL_S: Int('how long the first answer to a write with an Idempotency-Key is kept and replayed, in seconds [86400]'),
  AUDIT_LOG: OneOf(['on', 'off'], 'record the audit trail of writes and refused authentications; off records nothing (for measurements) [on]'),
  AUDIT_RETENTION_DAYS: Int('days an audit event is kept, at least 1 [90]'),
  PANEL_SESSION_IDLE_S: Int("a panel session ends after this many seconds without a request (noted to the minute) [1800]"),
  PANEL_SESSION_MAX_S: Int('a panel session ends this many seconds after its login in any case [43200]'),
};

/** Every setting, by name (the names are also what tests clear from an inherited environment). */
export const EnvSchema = { properties: SETTINGS } as const;

/** The problems of `raw` (set values only), in the order of the settings; none: []. */
function settingProblems(raw: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(SETTINGS) as [string, Setting][]) {
    const v = raw[name];
    if (v === undefined) continue;
    if (s.values && !s.values.includes(v)) problems.push(`${name}: must be one of ${s.values.join(', ')}`);
    else if (s.pattern && !new RegExp(s.pattern, 'u').test(v)) problems.push(`${name}: must match pattern "${s.pattern}"`);
  }
  return problems;
}

export type Env = { [K in keyof typeof SETTINGS]?: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never };

/** DNSSEC signing (docs/decisions/0032-dnssec.md). */
export interface DnssecSettings {
  /** DNS_DNSSEC: domains that have not chosen are signed. */
  default: boolean;
  /** DNS_DNSSEC_ALGORITHM of new keys: 13 ECDSA P-256, 15 Ed25519. */
  algorithm: 13 | 15;
  validityS: number;
  refreshS: number;
  /** DNS_DNSSEC_PARENT: where the DS of a domain is asked for; empty: the operator confirms (ds-seen). */
  parent: { host: string; port: number }[];
  propagationS: number;
  /** The DS TTL assumed while the parent is not asked. */
  dsTtlS: number;
  /** 0: no automatic rollover. */
  rolloverDays: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  publicBaseUrl: string;
  apiVendor: string;
  redisUrl: string | null;
  trustProxy: string[] | null;
  rateLimit: { max: number; windowMs: number };
  errorBlock: { max: number; windowMs: number; durationMs: number };
  dnsListen: string;
  dnsDefaultTtl: number;
  /** The DNS server (src/dns; docs/decisions/0003-dns-propagation.md). */
  dns: { nameservers: string[]; hostmaster: string; pollMs: number; heartbeatMs: number; serverStaleMs: number; secondaryTimeoutMs: number; catalogZone: string | null; udpBatch: 'auto' | 'on' | 'off'; dnssec: DnssecSettings };
  /** The operator's default base records of a presence domain (null: that record is left out); `autoconfig` is added to every plan's. */
  dnsBase: { ipv4: string | null; ipv6: string | null; mx: string | null; autoconfig: string | null };
  brandWords: string[];
  logLevel: string;
  rdap: { servers: Record<string, string>; timeoutMs: number };
  http: { bodyLimit: number; requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number };
  demoData: 'auto' | 'on' | 'off';
  /** The web server this host runs (WEB_SERVER), whose jobs its worker claims; null: none. */
  webServer: string | null;
  /** Issuer of on-demand certificates (WEB_TLS_ISSUER). */
  webTlsIssuer: 'acme' | 'internal';
  /** ACME_DIRECTORY; null: Let's Encrypt. */
  acmeDirectory: string | null;
  /** WEB_API_UPSTREAM: the API this host's web server also fronts; null: none. */
  webApiUpstream: string | null;
  /** WEB_CREATE_USERS=on. */
  webCreateUsers: boolean;
  /** WEB_SFTP_LOG: sshd's log the web worker follows (`journal` or a file); null: none. */
  webSftpLog: string | null;
  /** A server the demo dataset registers as the default of its type and version, or null. */
  demoMariadbUrl: string | null;
  /** `leaseMs` null: the worker's default for the engine (src/queue/worker.ts DEFAULT_LEASE_MS; docs/decisions/0005-dead-workers.md). */
  jobs: { concurrency: number; leaseMs: number | null; maxAttempts: number; pollMs: number };
  /** Webhook deliveries (API guide "Webhooks"; docs/decisions/0027-webhooks.md). */
  webhooks: { allowCidrs: string[]; denyCidrs: string[]; secretKeys: string[]; timeoutMs: number };
  /** IDEMPOTENCY_KEY_TTL_S in ms (API guide "Safe retries"). */
  idempotencyKeyTtlMs: number;
  /** The audit trail (docs/decisions/0029-audit-trail.md): AUDIT_LOG, AUDIT_RETENTION_DAYS. */
  audit: { enabled: boolean; retentionDays: number };
  /** The customer panel's logins (API guide "Panel sessions (extension)"): PANEL_SESSION_IDLE_S, PANEL_SESSION_MAX_S. */
  panel: { idleS: number; maxS: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n  - ${problems.join('\n  - ')}`);
  }
}

const DEFAULT_DATABASE_URL = './data/hostplane.db';

/** Reads settings from `env` (only the names of EnvSchema); throws ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  const problems = settingProblems(raw);
  const e = raw as Env;
  const num = (v: string | undefined, d: number) => (v === undefined ? d : Number(v));
  const port = num(e.PORT, 8080);
  if (port < 1 || port > 65535) problems.push('PORT: must be 1..65535');

  const positive = (name: keyof Env, v: number) => {
    if (!(v > 0)) problems.push(`${name}: must be greater than 0`);
    return v;
  };
  const atLeast0 = (name: keyof Env, v: number) => {
    if (!(v >= 0)) problems.push(`${name}: must be 0 or more`);
    return v;
  };
  const rdapServers: Record<string, string> = {};
  for (const pair of (e.RDAP_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\*|[a-z0-9-]+)=(https?:\/\/\S+)$/i.exec(pair);
    if (!m) problems.push(`RDAP_SERVERS: "${pair}" is not tld=http(s)://url`);
    else rdapServers[m[1].toLowerCase()] = m[2].replace(/\/+$/, '');
  }
  const dnsListen = e.DNS_LISTEN ?? '127.0.0.1:5300';
  if (dnsListen !== 'off' && !/^(\[[0-9a-f:]+\]|[^:\s]+):[0-9]{1,5}$/i.test(dnsListen)) {
    problems.push('DNS_LISTEN: must be host:port or off');
  }
  const dnsDefaultTtl = num(e.DNS_DEFAULT_TTL, 3600);
  if (dnsDefaultTtl < 300 || dnsDefaultTtl > 86400) problems.push('DNS_DEFAULT_TTL: must be 300..86400 seconds');
  const dnsHost = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
  const nameservers = (e.DNS_NAMESERVERS ?? 'ns1.hostplane.test,ns2.hostplane.test')
    .split(',').map((s) => s.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  if (!nameservers.length) problems.push('DNS_NAMESERVERS: name at least one name server');
  for (const ns of nameservers) if (!dnsHost.test(ns)) problems.push(`DNS_NAMESERVERS: "${ns}" is not a host name`);
  // RNAME: `hostmaster@example.com` is written `hostmaster.example.com` (a dot in the local part as `\.`).
  const firstNsDomain = nameservers[0]?.split('.').slice(1).join('.') || nameservers[0] || 'invalid';
  let hostmaster = (e.DNS_HOSTMASTER ?? `hostmaster.${firstNsDomain}`).trim().toLowerCase().replace(/\.$/, '');
  const at = hostmaster.lastIndexOf('@');
  if (at > 0) hostmaster = `${hostmaster.slice(0, at).replace(/\./g, '\\.')}.${hostmaster.slice(at + 1)}`;
  // An escaped dot belongs to the local part's one label.
  if (!dnsHost.test(hostmaster.replace(/\\\./g, '-'))) problems.push(`DNS_HOSTMASTER: "${e.DNS_HOSTMASTER}" is not a mailbox name or address`);
  const catalogZone = (e.DNS_CATALOG_ZONE ?? 'catalog.hostplane.invalid').trim().toLowerCase().replace(/\.$/, '');
  if (catalogZone !== 'off' && (!dnsHost.test(catalogZone) || !catalogZone.includes('.'))) problems.push(`DNS_CATALOG_ZONE: "${e.DNS_CATALOG_ZONE}" is not a zone name (at least two labels) or off`);
  const dnsSettings = {
    nameservers,
    hostmaster,
    pollMs: positive('DNS_POLL_MS', num(e.DNS_POLL_MS, 100)),
    heartbeatMs: positive('DNS_HEARTBEAT_MS', num(e.DNS_HEARTBEAT_MS, 1000)),
    serverStaleMs: positive('DNS_SERVER_STALE_MS', num(e.DNS_SERVER_STALE_MS, 5000)),
    secondaryTimeoutMs: positive('DNS_SECONDARY_TIMEOUT_MS', num(e.DNS_SECONDARY_TIMEOUT_MS, 60_000)),
    catalogZone: catalogZone === 'off' ? null : catalogZone,
    udpBatch: e.DNS_UDP_BATCH ?? 'auto',
    dnssec: {
      default: e.DNS_DNSSEC === 'on',
      algorithm: e.DNS_DNSSEC_ALGORITHM === 'ed25519' ? 15 : 13,
      validityS: positive('DNS_DNSSEC_VALIDITY_S', num(e.DNS_DNSSEC_VALIDITY_S, 14 * 86_400)),
      refreshS: positive('DNS_DNSSEC_REFRESH_S', num(e.DNS_DNSSEC_REFRESH_S, 7 * 86_400)),
      parent: (e.DNS_DNSSEC_PARENT ?? '').split(',').map((v) => v.trim()).filter(Boolean).flatMap((v) => {
        const hp = parseHostPort(v);
        if (!hp) problems.push(`DNS_DNSSEC_PARENT: "${v}" is not host:port`);
        return hp ? [hp] : [];
      }),
      propagationS: atLeast0('DNS_DNSSEC_PROPAGATION_S', num(e.DNS_DNSSEC_PROPAGATION_S, 3600)),
      dsTtlS: atLeast0('DNS_DNSSEC_DS_TTL_S', num(e.DNS_DNSSEC_DS_TTL_S, 86_400)),
      rolloverDays: atLeast0('DNS_DNSSEC_ROLLOVER_DAYS', num(e.DNS_DNSSEC_ROLLOVER_DAYS, 0)),
    } satisfies DnssecSettings,
  };
  // Signatures must be made again while they are still valid, with room to reach the secondaries.
  // Signatures start up to two hours back (rounded to the hour, an hour for clocks): a refresh
  // closer than that to the validity would find every zone due again at once.
  if (dnsSettings.dnssec.refreshS + 7200 > dnsSettings.dnssec.validityS) problems.push('DNS_DNSSEC_REFRESH_S: must be at least two hours less than DNS_DNSSEC_VALIDITY_S');
  // A server must get at least two heartbeats into the window, or a slow tick makes it "stale".
  if (dnsSettings.serverStaleMs < 2 * dnsSettings.heartbeatMs) problems.push('DNS_SERVER_STALE_MS: must be at least twice DNS_HEARTBEAT_MS');
  const baseSetting = (name: 'DNS_BASE_IPV4' | 'DNS_BASE_IPV6' | 'DNS_BASE_MX' | 'DNS_BASE_AUTOCONFIG', fallback: string, valid: (v: string) => boolean) => {
    const v = (e[name] ?? fallback).trim();
    if (v.toLowerCase() === 'off') return null;
    if (!valid(v)) problems.push(`${name}: "${v}" is not valid (or off)`);
    return v.toLowerCase().replace(/\.$/, '');
  };
  const hostName = (v: string) => /^(?=.{1,253}\.?$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]\.?$/i.test(v);
  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const dnsBase = {
    ipv4: baseSetting('DNS_BASE_IPV4', '192.0.2.10', (v) => net.isIPv4(v)),
    ipv6: baseSetting('DNS_BASE_IPV6', '2001:db8::10', (v) => net.isIPv6(v) && !v.includes('%')),
    mx: baseSetting('DNS_BASE_MX', 'mail.hostplane.test', hostName),
    // A CNAME names a host: an API at an address or at localhost gets no autoconfig record.
    autoconfig: baseSetting('DNS_BASE_AUTOCONFIG', hostName(publicHost(publicBaseUrl)) ? publicHost(publicBaseUrl) : 'off', hostName),
  };

  const databaseUrl = e.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const urlProblem = databaseUrlProblem(databaseUrl);
  if (urlProblem) problems.push(`DATABASE_URL: ${urlProblem}`);
  const demoData = e.DEMO_DATA ?? 'auto';

  const config: Config = {
    port,
    // The demo's tokens are printed for anyone to read: its API stays on this machine unless HOST says otherwise.
    host: e.HOST ?? (demoWanted(demoData, databaseUrl) ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl,
    publicBaseUrl,
    apiVendor: e.API_VENDOR ?? 'hostplane',
    redisUrl: e.REDIS_URL ?? null,
    trustProxy: addressList('TRUST_PROXY', e.TRUST_PROXY, problems),
    rateLimit: {
      max: positive('RATE_LIMIT_MAX', num(e.RATE_LIMIT_MAX, 10)),
      windowMs: positive('RATE_LIMIT_WINDOW_S', num(e.RATE_LIMIT_WINDOW_S, 10)) * 1000,
    },
    errorBlock: {
      max: positive('ERROR_BLOCK_MAX', num(e.ERROR_BLOCK_MAX, 30)),
      windowMs: positive('ERROR_BLOCK_WINDOW_S', num(e.ERROR_BLOCK_WINDOW_S, 600)) * 1000,
      durationMs: positive('ERROR_BLOCK_DURATION_S', num(e.ERROR_BLOCK_DURATION_S, 900)) * 1000,
    },
    dnsListen,
    dnsDefaultTtl,
    dns: dnsSettings,
    dnsBase,
    brandWords: (e.BRAND_WORDS ?? 'hostplane').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
    logLevel: e.LOG_LEVEL ?? 'info',
    rdap: { servers: rdapServers, timeoutMs: positive('RDAP_TIMEOUT_MS', num(e.RDAP_TIMEOUT_MS, 3000)) },
    http: {
      bodyLimit: positive('BODY_LIMIT_BYTES', num(e.BODY_LIMIT_BYTES, 1024 * 1024)),
      requestTimeoutMs: positive('REQUEST_TIMEOUT_MS', num(e.REQUEST_TIMEOUT_MS, 10_000)),
      headersTimeoutMs: positive('HEADERS_TIMEOUT_MS', num(e.HEADERS_TIMEOUT_MS, 5_000)),
      keepAliveTimeoutMs: positive('KEEP_ALIVE_TIMEOUT_MS', num(e.KEEP_ALIVE_TIMEOUT_MS, 5_000)),
    },
    demoData,
    webServer: e.WEB_SERVER ?? null,
    webTlsIssuer: e.WEB_TLS_ISSUER ?? 'acme',
    acmeDirectory: e.ACME_DIRECTORY ?? null,
    webApiUpstream: e.WEB_API_UPSTREAM ?? null,
    webCreateUsers: e.WEB_CREATE_USERS === 'on',
    webSftpLog: e.WEB_SFTP_LOG ?? null,
    demoMariadbUrl: e.DEMO_MARIADB_URL ?? null,
    jobs: {
      concurrency: positive('JOB_CONCURRENCY', num(e.JOB_CONCURRENCY, 4)),
      leaseMs: e.JOB_LEASE_MS === undefined ? null : Number(e.JOB_LEASE_MS),
      maxAttempts: positive('JOB_MAX_ATTEMPTS', num(e.JOB_MAX_ATTEMPTS, 10)),
      pollMs: positive('JOB_POLL_MS', num(e.JOB_POLL_MS, 200)),
    },
    webhooks: {
      allowCidrs: addressList('WEBHOOK_ALLOW_CIDRS', e.WEBHOOK_ALLOW_CIDRS, problems) ?? [],
      denyCidrs: addressList('WEBHOOK_DENY_CIDRS', e.WEBHOOK_DENY_CIDRS, problems) ?? [],
      secretKeys: secretKeys(e.WEBHOOK_SECRET_KEY, problems),
      timeoutMs: positive('WEBHOOK_TIMEOUT_MS', num(e.WEBHOOK_TIMEOUT_MS, 10_000)),
    },
    idempotencyKeyTtlMs: positive('IDEMPOTENCY_KEY_TTL_S', num(e.IDEMPOTENCY_KEY_TTL_S, 86_400)) * 1000,
    audit: { enabled: e.AUDIT_LOG !== 'off', retentionDays: num(e.AUDIT_RETENTION_DAYS, 90) },
    panel: { idleS: num(e.PANEL_SESSION_IDLE_S, 1800), maxS: num(e.PANEL_SESSION_MAX_S, 43_200) },
  };
  // 0 could mean "keep none" or "keep all": neither is said by a number; AUDIT_LOG=off records nothing.
  if (!(config.audit.retentionDays >= 1 && config.audit.retentionDays <= 36500)) {
    problems.push('AUDIT_RETENTION_DAYS: must be 1..36500 (AUDIT_LOG=off records nothing)');
  }
  // The last use is noted once a minute: a shorter idle limit would end sessions in use.
  if (!(config.panel.idleS >= 60)) problems.push('PANEL_SESSION_IDLE_S: must be at least 60');
  if (!(config.panel.maxS >= config.panel.idleS)) problems.push('PANEL_SESSION_MAX_S: must be at least PANEL_SESSION_IDLE_S');
  // Heartbeats come every third of the lease; below a second a busy event loop would lose leases.
  if (config.jobs.leaseMs !== null && !(config.jobs.leaseMs >= 1000)) problems.push('JOB_LEASE_MS: must be at least 1000');
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    problems.push('HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS');
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** The host name of an http(s) URL, '' when it has none (a pattern problem is reported elsewhere). */
function publicHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** Addresses or CIDR ranges (of trusted proxies, of webhook receivers); each bad entry is reported with the rest. */
function addressList(name: keyof Env, raw: string | undefined, problems: string[]): string[] | null {
  if (!raw) return null;
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr);
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (!family || !bitsOk || extra !== undefined) problems.push(`${name}: "${entry}" is not an IP address or CIDR range`);
  }
  return entries;
}

/** WEBHOOK_SECRET_KEY: base64 keys of 32 bytes (`openssl rand -base64 32`); each bad entry is reported. */
function secretKeys(raw: string | undefined, problems: string[]): string[] {
  const keys = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  keys.forEach((k, i) => {
    if (!/^[A-Za-z0-9+/]{43}=$/.test(k)) problems.push(`WEBHOOK_SECRET_KEY: key ${i + 1} is not 32 bytes in base64 (make one with: openssl rand -base64 32)`);
  });
  return keys;
}

export function isDefaultDatabase(config: Config): boolean {
  return config.databaseUrl === DEFAULT_DATABASE_URL;
}

/** Whether `serve` loads the demo dataset into a new database: DEMO_DATA on, or auto on the embedded default database. */
function demoWanted(demoData: Config['demoData'], databaseUrl: string): boolean {
  return demoData === 'on' || (demoData === 'auto' && databaseUrl === DEFAULT_DATABASE_URL);
}

/** `serve` loads the demo dataset into a new database (DEMO_DATA), and then listens on loopback unless HOST is set. */
export const wantsDemoData = (config: Config) => demoWanted(config.demoData, config.databaseUrl);

/**
 * What is wrong with the form of DATABASE_URL, or null. Any other scheme would be taken for a
 * relative file name (`mysql://db/x` a SQLite file `./mysql:/db/x`).
 */
function databaseUrlProblem(url: string): string | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'sqlite') return null;
  if (scheme === 'postgres' || scheme === 'postgresql') {
    return url.slice(scheme.length + 1).startsWith('//') ? null : `a PostgreSQL URL is ${scheme}://user:password@host:port/database`;
  }
  return `"${scheme}:" is not a database hostplane can use: give a file path for SQLite (e.g. ./data/hostplane.db or /var/lib/hostplane/hostplane.db), a sqlite: URL, or a postgres:// URL`;
}
