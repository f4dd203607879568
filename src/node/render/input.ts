// What an operator or a script gives `hostplane node render --facts <file>`: the few facts a profile
// cannot know (names, the store, keys, ids, TLS files). Read from JSON and checked field by field, so
// a wrong file is refused naming every bad field before anything is written. Also knot.conf's facts
// (`hostplane node render-knot`) and the mail policy service's config (`hostplane node mail-policy`).
import { isIP } from 'node:net';
import type { DovecotVersion, MailStore } from './facts.js';
import type { KnotFacts } from './knot.js';
import type { MailPolicyConfig } from './mail-policy.js';

/** What every mail node's facts name: the server, the API, the store, the mail owner, Dovecot. */
interface MailInput {
  name: string;
  apiUrl: string;
  doveadmKey: string;
  store: MailStore;
  mailUid: number;
  mailGid: number;
  dovecotVersion: DovecotVersion;
}

/** The local stack's facts (deploy/local/up.sh): everything else follows from dir and portBase. */
export interface PrivateInput extends MailInput {
  dir: string;
  portBase: number;
  /** null: rspamd is not run (Postfix without a milter). */
  rspamd: { hsCacheDir: string } | null;
  /** The stack's own certificate for Postfix (STARTTLS, submission); absent or null: no TLS and no submission. */
  tls?: { cert: string; key: string } | null;
}

/** A Debian mail node's facts; the layout and ports are Debian's (profiles.ts). */
export interface SystemInput extends MailInput {
  /** / on a node; a prefix for every path of the layout in tests. */
  root: string;
  hostname: string;
  postmaster: string;
  tls: { cert: string; key: string };
}

/** Bad facts: every problem, one line each. */
export class FactsError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

type Json = Record<string, unknown>;
type Test = RegExp | ((v: string) => boolean);
const passes = (test: Test, v: string) => (typeof test === 'function' ? test(v) : test.test(v));

/** Reads one field after another, collecting what is wrong instead of stopping at the first. */
class Reader {
  constructor(
    private readonly o: Json,
    private readonly at = '',
    /** Shared with the readers of nested objects. */
    readonly problems: string[] = [],
  ) {}

  private bad(key: string, want: string): undefined {
    const v = this.o[key];
    this.problems.push(`${this.at}${key} ${v === undefined ? 'is missing' : `must be ${want}; got ${JSON.stringify(v)}`}${v === undefined ? ` (${want})` : ''}`);
    return undefined;
  }

  string(key: string, test: Test, want: string, fallback?: string): string {
    const v = this.o[key] ?? fallback;
    return typeof v === 'string' && passes(test, v) ? v : (this.bad(key, want) ?? '');
  }

  /** A non-empty array of strings, each bad one named by its index. */
  list(key: string, test: Test, want: string): string[] {
    const v = this.o[key];
    if (!Array.isArray(v) || !v.length) return this.bad(key, `a non-empty list of ${want}`) ?? [];
    const items = new Reader(Object.fromEntries(v.map((item, i) => [`${i}]`, item])) as Json, `${this.at}${key}[`, this.problems);
    return v.map((_, i) => items.string(`${i}]`, test, want));
  }

  int(key: string, min: number, max: number, want: string): number {
    const v = this.o[key];
    return Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? (v as number) : (this.bad(key, want) ?? 0);
  }

  object(key: string, optional = false): Reader | null {
    const v = this.o[key];
    if (optional && (v === undefined || v === null)) return null;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return new Reader(v as Json, `${this.at}${key}.`, this.problems);
    this.bad(key, 'an object');
    return null;
  }

  has(key: string): boolean {
    return this.o[key] !== undefined && this.o[key] !== null;
  }

  version(fallback: DovecotVersion): DovecotVersion {
    return this.string('dovecotVersion', /^2\.[34]$/, '"2.3" or "2.4"', fallback) as DovecotVersion;
  }
}

// Paths and names end up unquoted in Dovecot's and Postfix's files: only characters none of them reads
// specially.
const PATH = /^\/[A-Za-z0-9._/+@-]*$/;
const PATH_WANT = 'an absolute path of letters, digits and . _ - + @ /';
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
const NAME_WANT = 'the registered mail server name: 1 to 32 of a-z, 0-9 and "-", e.g. mx1';
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const PLAIN = /^[^\0-\x1f\x7f"\\%]+$/;
const PLAIN_WANT = 'a non-empty string without control characters, quotes, backslashes or %';
const ID_MAX = 4294967294;

function common(r: Reader) {
  const store = r.object('store');
  return {
    name: r.string('name', NAME, NAME_WANT),
    apiUrl: r.string('apiUrl', /^https?:\/\/[A-Za-z0-9.:[\]_-]+(\/[A-Za-z0-9._~/-]*)?$/, "hostplane's API base, http(s)://host[:port][/path]").replace(/\/$/, ''),
    doveadmKey: r.string('doveadmKey', /^[A-Za-z0-9+/=._-]{16,256}$/, 'the doveadm API key: 16 to 256 of A-Z a-z 0-9 + / = . _ -'),
    store: store ? readStore(store) : ({ driver: 'sqlite', path: '' } as MailStore),
    mailUid: r.int('mailUid', 1, ID_MAX, "the uid of the mailboxes' system user"),
    mailGid: r.int('mailGid', 1, ID_MAX, "the gid of the mailboxes' system group"),
  };
}

function readStore(s: Reader): MailStore {
  const driver = s.string('driver', /^(pgsql|sqlite)$/, '"pgsql" or "sqlite"');
  if (driver === 'sqlite') return { driver, path: s.string('path', PATH, PATH_WANT) };
  return {
    driver: 'pgsql',
    host: s.string('host', /^[A-Za-z0-9.:_-]+$/, 'a host name or IP address'),
    port: s.int('port', 1, 65535, 'a port number'),
    dbname: s.string('dbname', PLAIN, PLAIN_WANT),
    user: s.string('user', PLAIN, PLAIN_WANT),
    password: s.string('password', /^[^\0-\x1f\x7f]*$/, 'a string without control characters'),
    schema: s.string('schema', PLAIN, PLAIN_WANT),
    ...(s.has('sslRootCert') ? { sslRootCert: s.string('sslRootCert', PATH, PATH_WANT) } : {}),
  };
}

function json(value: unknown): Reader {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FactsError(['the facts must be a JSON object']);
  return new Reader(value as Json);
}

function done<T>(r: Reader, value: T): T {
  if (r.problems.length) throw new FactsError(r.problems);
  return value;
}

export function readPrivateInput(value: unknown): PrivateInput {
  const r = json(value);
  const rspamd = r.object('rspamd', true);
  const tls = r.object('tls', true);
  // Mail uses port-base+10 to +13, rspamd +14 and +15, submission +17 and +18, the policy service +19.
  const top = 65535 - 19;
  return done(r, {
    dir: r.string('dir', PATH, PATH_WANT),
    portBase: r.int('portBase', 1, top, `the stack's port-base, 1 to ${top}`),
    ...common(r),
    dovecotVersion: r.version('2.3'),
    rspamd: rspamd ? { hsCacheDir: rspamd.string('hsCacheDir', PATH, PATH_WANT) } : null,
    tls: tls ? { cert: tls.string('cert', PATH, PATH_WANT), key: tls.string('key', PATH, PATH_WANT) } : null,
  });
}

export function readSystemInput(value: unknown): SystemInput {
  const r = json(value);
  const tls = r.object('tls');
  const hostname = r.string('hostname', HOSTNAME, 'the node\'s host name in lower case, e.g. mx1.example.net');
  return done(r, {
    root: r.string('root', PATH, PATH_WANT, '/').replace(/(.)\/$/, '$1'),
    hostname,
    postmaster: r.string('postmaster', /^[^\s@"\\%]+@[a-z0-9.-]+$/, 'an e-mail address', `postmaster@${hostname}`),
    ...common(r),
    dovecotVersion: r.version('2.4'),
    tls: { cert: tls?.string('cert', PATH, PATH_WANT) ?? '', key: tls?.string('key', PATH, PATH_WANT) ?? '' },
  });
}

/** The mail policy service's config (render/mail-policy.ts), as `hostplane node mail-policy` reads it. */
export function readMailPolicyConfig(value: unknown): MailPolicyConfig {
  const r = json(value);
  const store = r.object('store');
  return done(r, {
    name: r.string('name', NAME, NAME_WANT),
    listen: r.string('listen', (v) => /^[0-9.]+:[1-9][0-9]{0,4}$/.test(v) && isIP(v.slice(0, v.lastIndexOf(':'))) === 4 && Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'host:port with an IPv4 address, e.g. "127.0.0.1:10040"'),
    store: store ? readStore(store) : ({ driver: 'sqlite', path: '' } as MailStore),
  });
}

// knot.conf quotes its paths (JSON-style); the other values it writes bare.
const KNOT_PATH = /^\/[^\0-\x1f\x7f"\\]*$/;
const KNOT_PATH_WANT = 'an absolute path without quotes, backslashes or control characters';
const IP_WANT = 'an IP address';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ZONE = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** `addr@port` as Knot's listen takes it. */
function addressAt(v: string): boolean {
  const at = v.lastIndexOf('@');
  const port = Number(v.slice(at + 1));
  return at > 0 && isIP(v.slice(0, at)) !== 0 && /^[1-9][0-9]*$/.test(v.slice(at + 1)) && port <= 65535;
}

/** A Knot secondary's facts (src/node/render/knot.ts), as `hostplane node render-knot` reads them. */
export function readKnotInput(value: unknown): KnotFacts {
  const r = json(value);
  const path = (name: string) => r.string(name, KNOT_PATH, KNOT_PATH_WANT);
  const seconds = (name: string) => r.int(name, 1, 2147483647, 'a positive whole number of seconds');
  const listen = r.list('listen', addressAt, 'address@port, e.g. "127.0.0.1@53"');
  const user = r.has('user') ? r.string('user', /^[A-Za-z_][A-Za-z0-9._-]*:[A-Za-z_][A-Za-z0-9._-]*$/, 'user:group, e.g. "knot:knot"') : undefined;
  const [rundir, storage] = [path('rundir'), path('storage')];
  const log = r.string('log', (v) => v === 'syslog' || KNOT_PATH.test(v), `"syslog" or ${KNOT_PATH_WANT}`);
  const control = r.has('control') ? path('control') : undefined;
  const k = r.object('key');
  const key = {
    name: k?.string('name', /^[A-Za-z0-9._-]+$/, "the TSIG key's name: letters, digits and . _ -") ?? '',
    secret: k?.string('secret', (v) => BASE64.test(v) && Buffer.from(v, 'base64').length >= 16, 'the TSIG secret: base64 of at least 16 bytes') ?? '',
  };
  const p = r.object('primary');
  const primary = { host: p?.string('host', (v) => isIP(v) !== 0, IP_WANT) ?? '', port: p?.int('port', 1, 65535, 'a port number') ?? 0 };
  return done(r, {
    listen,
    ...(user === undefined ? {} : { user }),
    rundir,
    storage,
    log,
    ...(control === undefined ? {} : { control }),
    key,
    primary,
    via: r.string('via', (v) => isIP(v) !== 0, IP_WANT),
    catalogZone: r.string('catalogZone', ZONE, 'a domain name in lower case without the final dot, e.g. "catalog.hostplane.invalid"'),
    refreshMaxS: seconds('refreshMaxS'),
    retryMaxS: seconds('retryMaxS'),
  });
}
