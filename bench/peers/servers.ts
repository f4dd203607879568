// The servers of the DNS side-by-side bench: hostplane (its build in dist/), NSD as a server of
// zone files or as hostplane's secondary, PowerDNS on a sqlite3 database filled by its own
// zone2sql; the zones moved between them by AXFR.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { DecodedPacket } from 'dns-packet';
import type { DemoCustomer } from '../../src/admin/demo.js';
import { nsdConf, testKey } from '../../test/helpers/secondaries.js';
import { DnsClient } from '../dns-zones.js';
import { LOG_LEVEL } from '../report.js';
import { run, startProc, which, type Proc } from './processes.js';
import type { Question } from './queries.js';
import { PDNS_SCHEMAS, SERVER_CORE } from './settings.js';

// ---- the servers -------------------------------------------------------------------------------

export interface Ports {
  hpDns: number;
  /** hostplane with DNS_UDP_BATCH=off */
  hpDgram: number;
  hpHttp: number;
  nsd: number;
  secondary: number;
  /** PowerDNS's HTTP API (its webserver), where changes are made in step 2. */
  pdnsApi: number;
  pdns: number;
  /** hostplane with DNS_DNSSEC=on and Knot serving its signed zone (the signed round, signed.ts). */
  hpSigned: number;
  knot: number;
}

export interface Ctx {
  dir: string;
  db: string;
  ports: Ports;
  key: ReturnType<typeof testKey>;
  keyFile: string;
  owner: DemoCustomer;
  mixes: { zone100: string; zone10k: string };
  sample: Question[];
  reference: string[];
  log: (s: string) => void;
}

export const hostplaneEnv = (c: Ctx, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: c.db,
  DNS_LISTEN: `127.0.0.1:${c.ports.hpDns}`,
  HOST: '127.0.0.1',
  PORT: String(c.ports.hpHttp),
  PUBLIC_BASE_URL: `http://127.0.0.1:${c.ports.hpHttp}`,
  DEMO_DATA: 'off',
  RATE_LIMIT_MAX: '1000000000',
  ERROR_BLOCK_MAX: '1000000000',
  LOG_LEVEL,
  ...extra,
});

/** hostplane as `npm start` runs it: the build in dist/ (made afresh at the start of the bench). */
export const HOSTPLANE_MAIN = 'dist/main.js';
export const hostplaneCli = (c: Ctx, args: string[]) => run('hostplane', process.execPath, [HOSTPLANE_MAIN, ...args], { env: hostplaneEnv(c) });

/** Waits until `port` answers `probe` with an answer of its type; seconds from `t0` (performance.now()). */
export async function serving(p: Proc, port: number, probe: Question, t0: number, limitS: number): Promise<number> {
  const client = new DnsClient(port);
  try {
    const end = Date.now() + limitS * 1000;
    for (;;) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}); its log ${p.log}:\n${tail(p.log)}`);
      try {
        await client.until(probe.name, probe.type, (a) => a.rcode === 'NOERROR' && a.answers.some((x) => x.type === probe.type), 20, 1000);
        return (performance.now() - t0) / 1000;
      } catch {
        if (Date.now() > end) throw new Error(`${p.name} does not answer ${probe.name} ${probe.type} after ${limitS} s; its log ${p.log}:\n${tail(p.log)}`);
      }
    }
  } finally {
    client.close();
  }
}

export function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function startNsd(c: Ctx, label: string, port: number, zones: { name: string; file: string }[], secondary?: { primaryPort: number; key: ReturnType<typeof testKey> }): Proc {
  const dir = path.join(c.dir, label);
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nsd.conf');
  fs.writeFileSync(conf, nsdConf(dir, port, zones, secondary));
  return startProc(label, which('nsd') ?? 'nsd', ['-d', '-c', conf, '-P', path.join(dir, 'nsd.pid')], { log: path.join(dir, 'stdout.log'), core: SERVER_CORE });
}

export function pdnsConf(c: Ctx, dir: string, database: string, caches: boolean): string {
  return [
    'launch=gsqlite3',
    `gsqlite3-database=${database}`,
    'local-address=127.0.0.1',
    `local-port=${c.ports.pdns}`,
    'guardian=no',
    'daemon=no',
    'disable-syslog=yes',
    `socket-dir=${dir}`,
    'write-pid=no',
    'security-poll-suffix=',
    'loglevel=4',
    ...(caches
      ? ['webserver=no', 'api=no']
      : [
          'cache-ttl=0', 'query-cache-ttl=0', 'negquery-cache-ttl=0', 'zone-cache-refresh-interval=0',
          // Changes through its REST API, as hostplane's go through its own (step 2).
          'webserver=yes', 'webserver-address=127.0.0.1', `webserver-port=${c.ports.pdnsApi}`, 'webserver-allow-from=127.0.0.0/8', 'api=yes', `api-key=${PDNS_API_KEY}`,
        ]),
    '',
  ].join('\n');
}

export function startPdns(c: Ctx, label: string, database: string, caches: boolean): Proc {
  const dir = path.join(c.dir, label);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'pdns.conf'), pdnsConf(c, dir, database, caches));
  return startProc(label, which('pdns_server') ?? 'pdns_server', [`--config-dir=${dir}`], { log: path.join(dir, 'stdout.log'), core: SERVER_CORE });
}

/** The presence zones of the store, in hostplane's loading order. */
export function zonesOf(db: string): string[] {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare('select name from domains where has_presence = 1 order by name').all() as { name: string }[]).map((r) => r.name);
  } finally {
    d.close();
  }
}

/**
 * Every zone as hostplane serves it, by AXFR with the secondary's TSIG key (dig, 50 zones per
 * call), written as zone files `<dir>/<zone>.zone`; answers the records transferred.
 */
export async function exportZones(c: Ctx, zones: string[], dir: string, port = c.ports.hpDns): Promise<number> {
  fs.mkdirSync(dir, { recursive: true });
  let records = 0;
  const out = path.join(c.dir, 'axfr.txt');
  for (let i = 0; i < zones.length; i += 50) {
    const chunk = zones.slice(i, i + 50);
    const args = ['@127.0.0.1', '-p', String(port), '-y', `hmac-sha256:${c.key.name}:${c.key.secret}`, '+onesoa', '+nocmd', '+nostats', '+nocomments', '+noquestion', '+time=60', '+tries=1'];
    for (const z of chunk) args.push(z, 'AXFR');
    const r = await run('dig', 'dig', args, { stdoutFile: out, timeoutMs: 600_000 });
    const text = fs.readFileSync(out, 'utf8');
    if (r.code !== 0 || /Transfer failed|communications error|connection refused/i.test(text)) throw new Error(`AXFR from hostplane failed (${r.code}): ${(text + r.err).slice(0, 1500)}`);
    const byZone = new Map<string, string[]>();
    let current: string[] | null = null;
    for (const line of text.split('\n')) {
      if (!line || line.startsWith(';')) continue;
      const f = line.split(/\s+/);
      // dig prints the TSIG record of every signed message: not zone content.
      if (f[3] === 'TSIG') continue;
      if (f[3] === 'SOA') {
        current = [];
        byZone.set(f[0].replace(/\.$/, '').toLowerCase(), current);
      }
      if (!current) throw new Error(`AXFR output does not start with a SOA: ${line}`);
      current.push(line);
    }
    for (const z of chunk) {
      const lines = byZone.get(z);
      if (!lines) throw new Error(`AXFR of ${z} gave nothing: ${text.slice(0, 500)}`);
      fs.writeFileSync(path.join(dir, `${z}.zone`), lines.join('\n') + '\n');
      records += lines.length;
    }
  }
  fs.rmSync(out, { force: true });
  return records;
}

/** A fresh PowerDNS sqlite3 database with `zones` from their zone files, through PowerDNS's own zone2sql. */
export async function pdnsDatabase(c: Ctx, zones: string[], zoneDir: string, file: string): Promise<void> {
  fs.rmSync(file, { force: true });
  const schema = PDNS_SCHEMAS.find((s) => fs.existsSync(s));
  if (!schema) throw new Error(`no PowerDNS sqlite3 schema in ${PDNS_SCHEMAS.join(' or ')}`);
  const d = new Database(file);
  d.exec(fs.readFileSync(schema, 'utf8'));
  d.close();
  const named = path.join(c.dir, 'named.conf');
  fs.writeFileSync(named, zones.map((z) => `zone "${z}" { type master; file "${path.join(zoneDir, `${z}.zone`)}"; };\n`).join(''));
  const sqlFile = path.join(c.dir, 'zones.sql');
  const z = await run('zone2sql', which('zone2sql') ?? 'zone2sql', ['--gsqlite', '--transactions', `--named-conf=${named}`], { stdoutFile: sqlFile, timeoutMs: 1_800_000 });
  if (z.code !== 0) throw new Error(`zone2sql failed (${z.code}): ${z.err.slice(-1500)}`);
  const r = await run('sqlite3', 'sh', ['-c', 'exec sqlite3 "$0" < "$1"', file, sqlFile], { timeoutMs: 1_800_000 });
  if (r.code !== 0) throw new Error(`loading the PowerDNS database failed (${r.code}): ${r.err.slice(-1500)}`);
  fs.rmSync(sqlFile, { force: true });
}


/** PowerDNS's API key in step 2 (loopback only). */
export const PDNS_API_KEY = 'hp-peers-bench';

export async function addSecondary(c: Ctx) {
  const r = await hostplaneCli(c, ['admin', 'dns-secondary', 'add', '--name', 'nsd-peers', '--address', `127.0.0.1:${c.ports.secondary}`, '--tsig-key-file', c.keyFile]);
  if (r.code !== 0) throw new Error(`dns-secondary add: ${r.out}${r.err}`);
}

export async function removeSecondary(c: Ctx) {
  const r = await hostplaneCli(c, ['admin', 'dns-secondary', 'remove', 'nsd-peers']);
  if (r.code !== 0) throw new Error(`dns-secondary remove: ${r.out}${r.err}`);
}

export const startHostplane = (c: Ctx, command: 'dns' | 'serve', log: string, env: Record<string, string> = {}) =>
  startProc(`hostplane ${command}`, process.execPath, [HOSTPLANE_MAIN, command], { log: path.join(c.dir, log), core: SERVER_CORE, env: hostplaneEnv(c, env) });

/** How a started hostplane reads UDP, from its 'DNS server ready' log line ('batch' or 'dgram'). */
export function udpKindOf(p: Proc): string {
  const m = /"udp":"(\w+)"[^\n]*DNS server ready/.exec(fs.readFileSync(p.log, 'utf8'));
  return m ? m[1] : 'unknown';
}

/** Waits until the NSD secondary serves every zone at the serial hostplane serves. */
export async function transferred(c: Ctx, zones: string[]) {
  const primary = new DnsClient(c.ports.hpDns);
  const secondary = new DnsClient(c.ports.secondary);
  const serialOf = (p: DecodedPacket) => (p.answers.find((a) => a.type === 'SOA')?.data as { serial?: number } | undefined)?.serial;
  try {
    for (const z of zones) {
      const want = serialOf(await primary.until(z, 'SOA', () => true, 250, 3000));
      await secondary.until(z, 'SOA', (a) => serialOf(a) === want, 50, 600_000);
    }
  } finally {
    primary.close();
    secondary.close();
  }
}
