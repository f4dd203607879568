// The authoritative DNS server (issue 3 item 3; docs/decisions/0003-dns-propagation.md): UDP and
// TCP on DNS_LISTEN, answering from in-memory zones that follow the store's change log.
//
// Keeping current: every change to served records appends to dns_changes (recordChange). This
// process applies the log in id order: for each new change it reloads from the store the owners
// the change names (the whole zone when it names none), then writes the last applied id to its dns_servers row, which job handlers read
// (isApplied). It learns of changes three ways, fastest first: an in-process signal (serve records
// and serves in one process), PostgreSQL NOTIFY, and polling every DNS_POLL_MS, which alone is
// enough (a lost signal only costs time).
//
// Secondaries (docs/decisions/0013-dns-secondaries.md): zone transfers (AXFR/IXFR over TCP) and
// queries signed with TSIG take an asynchronous path (the registered secondaries are read from the
// store); every other query is answered as before, after a check for a TSIG record that costs a
// walk over the message's record headers when it has additional records. After applying a change,
// a listening server sends NOTIFY to every secondary.
import { once } from 'node:events';
import crypto from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { currentSchema } from '../db/dialect.js';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { nowIso } from '../db/time.js';
import { DNS_CHANNEL, onChangeRecorded } from '../provisioning/dns/propagation.js';
import { answerQuery, parseQuestion } from './query.js';
import { Notifier } from './notify-secondaries.js';
import { SecondariesRepository, type Secondary } from '../provisioning/dns/secondaries.repository.js';
import { AXFR, IXFR, addChange, axfrMessages, ixfrClientSerial, ixfrMessages, questionType, soaWire, withHistory } from './transfer-messages.js';
import { BADTIME, NOTAUTH, ResponseSigner, readTsig, timeOther, tsigOffset, unsignedTsigError, verifyRequest, type TsigRecord } from './tsig.js';
import { bindUdp, type UdpEndpoint } from './udp.js';
import { SOA_TIMERS, Zone, ZoneSet, type ZoneSettings } from './zone.js';
import { ZoneRepository, type ZoneChange } from './zone.repository.js';
import type { StoredRecord } from './rdata.js';

export type DnsServerConfig = Pick<Config, 'dnsListen' | 'dnsDefaultTtl' | 'dns'>;

export interface DnsServerOptions {
  store: Store;
  config: DnsServerConfig;
  log?: FastifyBaseLogger;
  /** Overrides config.dnsListen: `'127.0.0.1:0'` picks a free port (see `port`). */
  listen?: string;
}

/** Names of zones read per round trip at start (each zone's records are then read and built alone). */
const LOAD_PAGE = 1000;
/** PostgreSQL: zones read ahead of the one being built at start (pooled connections). */
const LOAD_AHEAD = 4;
/** Changes read per round trip; a backlog is worked through in batches this size. */
const CHANGE_BATCH = 1000;
/** After a local signal for change N, re-read this often until N is visible (it may not be committed yet)… */
const CHASE_INTERVAL_MS = 5;
/** …for at most this long; then polling takes over (the transaction may have rolled back). */
const CHASE_LIMIT_MS = 1000;
/** Rows of servers that stopped without cleaning up are removed after this long. */
const GONE_AFTER_MS = 60 * 60 * 1000;
/** Change-log entries older than this, and applied by every registered server, are deleted. */
const CHANGE_LOG_KEEP_MS = 24 * 60 * 60 * 1000;
const CHANGE_LOG_PURGE_EVERY_MS = 10 * 60 * 1000;
const TCP_IDLE_MS = 10_000;
const TCP_MAX_CONNECTIONS = 1000;
/** A TCP client that sends faster than it reads is cut off past this much unsent output. */
const TCP_MAX_BACKLOG = 1 << 20;
/** At most one warning per this interval for repeated failures (a database that is down). */
const WARN_EVERY_MS = 10_000;
/** Signed ordinary queries (a secondary's SOA check) use the secondaries read at most this long ago. */
const SECONDARIES_FRESH_MS = 1000;
const REFUSED = 5;

const silentLog = {
  info() {}, warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, child() { return silentLog; }, level: 'silent', silent() {},
} as unknown as FastifyBaseLogger;

/**
 * `read` of each item, answered in order, with up to `ahead` reads under way at once:
 * `for await (const z of inTurn(names, 4, (n) => repo.zone(n)))`. A failed read throws in its turn.
 */
async function* inTurn<T, R>(items: T[], ahead: number, read: (item: T) => Promise<R>): AsyncGenerator<R> {
  const reading: Promise<R>[] = [];
  let next = 0;
  for (;;) {
    while (reading.length < ahead && next < items.length) {
      const r = read(items[next++]);
      // Awaited in its turn; one that fails before then (or after the caller stopped) is not unhandled.
      r.catch(() => {});
      reading.push(r);
    }
    if (!reading.length) return;
    yield await reading.shift()!;
  }
}

/** `parseListen('[::1]:53')` → { host: '::1', port: 53 }; null for `off`. */
export function parseListen(listen: string): { host: string; port: number } | null {
  if (listen === 'off') return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):([0-9]{1,5})$/.exec(listen);
  if (!m || Number(m[3]) > 65535) throw new Error(`DNS_LISTEN: "${listen}" is not host:port or off`);
  return { host: m[1] ?? m[2], port: Number(m[3]) };
}

export function zoneSettings(config: DnsServerConfig): ZoneSettings {
  return { nameservers: config.dns.nameservers, hostmaster: config.dns.hostmaster, ttl: config.dnsDefaultTtl, ...SOA_TIMERS };
}

export class DnsServer {
  /** This process's row in dns_servers. */
  readonly id = `${os.hostname()}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  readonly zones = new ZoneSet();
  /** Every change up to this id is in `zones`. */
  appliedChangeId = 0;
  /** The bound UDP/TCP port (the same for both), or null when not listening. */
  port: number | null = null;
  host: string | null = null;

  /** How UDP is read: 'batch' (the native reader) or 'dgram'; null when not listening. */
  get udpKind(): UdpEndpoint['kind'] | null {
    return this.udp?.kind ?? null;
  }

  private readonly repo: ZoneRepository;
  private readonly settings: ZoneSettings;
  private readonly log: FastifyBaseLogger;
  private readonly startedAt = nowIso();
  private udp: UdpEndpoint | null = null;
  private tcp: net.Server | null = null;
  private readonly connections = new Set<net.Socket>();
  private timers: NodeJS.Timeout[] = [];
  private chaseTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private schema: string | null = null;
  private stopped = false;
  /** Zones loaded: before that, signals are remembered but the log is not read. */
  private loaded = false;
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  private chaseTarget = 0;
  private chaseUntil = 0;
  private reported = -1;
  private beating = false;
  private lastLogPurge = 0;
  private reportChain: Promise<void> = Promise.resolve();
  private lastWarn = 0;
  private secondaries: Secondary[] = [];
  private secondariesAt = 0;
  private notifier: Notifier | null = null;
  /** Zones added or removed since the catalog was built (true at start: built again after the first catch-up). */
  private catalogDirty = true;
  /** Zones whose serial moved and whose NOTIFY is not sent yet. */
  private readonly unannounced = new Set<string>();

  private constructor(private readonly opts: DnsServerOptions) {
    this.repo = new ZoneRepository(opts.store.db);
    this.settings = zoneSettings(opts.config);
    this.log = opts.log ?? silentLog;
  }

  /**
   * Loads every zone, listens, registers in dns_servers and starts following changes:
   * `const dns = await DnsServer.start({ store, config, log })` … `await dns.stop()`.
   * With DNS_LISTEN=off it still follows changes but answers nothing (and does not register,
   * so jobs do not wait for it).
   */
  static async start(opts: DnsServerOptions): Promise<DnsServer> {
    const server = new DnsServer(opts);
    try {
      await server.begin();
    } catch (err) {
      await server.stop().catch(() => {});
      throw err;
    }
    return server;
  }

  private async begin() {
    const { store } = this.opts;
    // Signals first, so nothing recorded while the zones load goes unnoticed.
    this.unsubscribe = onChangeRecorded((id) => this.wake(id));
    if (store.engine === 'postgres') {
      this.schema = await currentSchema(store.db);
      await this.listenForNotifications();
    }
    // The log position before the snapshot: changes after it are replayed, none is skipped.
    const from = await this.repo.lastChangeId();
    for (let after = ''; ; ) {
      const names = await this.repo.presenceDomains(after, LOAD_PAGE);
      // Zone by zone, each built before the next is read (its rows die young); on PostgreSQL a few
      // reads are under way meanwhile, so a store of many small zones is not one round trip each.
      for await (const rows of inTurn(names, store.engine === 'postgres' ? LOAD_AHEAD : 1, (name) => this.repo.zone(name))) {
        if (rows && this.serves(rows.domain)) this.zones.set(this.buildZone(rows.domain, rows.serial, rows.records));
      }
      if (names.length < LOAD_PAGE) break;
      after = names[names.length - 1];
    }
    this.appliedChangeId = from;
    this.rebuildCatalog(Math.max(1, from));
    this.loaded = true;
    await this.loadSecondaries(0);

    const bind = parseListen(this.opts.listen ?? this.opts.config.dnsListen);
    if (bind) {
      this.notifier = new Notifier(this.log);
      await this.bindSockets(bind.host, bind.port);
      if (this.udp?.notBatch) this.log.warn(`DNS UDP read by node's dgram (about half the queries per second): ${this.udp.notBatch}`);
      await this.report();
      this.timers.push(setInterval(() => void this.heartbeat(), this.opts.config.dns.heartbeatMs).unref());
    }
    this.timers.push(setInterval(() => this.wake(), this.opts.config.dns.pollMs).unref());
    this.log.info({ dns: bind ? `${this.host}:${this.port}` : 'off', udp: this.udpKind, zones: this.zones.size, appliedChangeId: from, server: this.id }, 'DNS server ready');
    this.wake();
  }

  /** Every presence domain is served, except one named like the catalog zone (which keeps its name). */
  private serves(domain: string): boolean {
    if (domain !== this.opts.config.dns.catalogZone) return true;
    this.warn(new Error(`the domain ${domain} has the name of the catalog zone (DNS_CATALOG_ZONE)`), 'DNS domain not served');
    return false;
  }

  /**
   * The catalog zone (RFC 9432, version 2; docs/decisions/0014-dns-zones-in-wire-form.md): one PTR
   * per zone served, under `<id>.zones.<catalog>`, so a secondary that reads catalogs (Knot's
   * catalog-role: interpret) adds and drops zones by itself. Served like a zone (SOA queries,
   * AXFR/IXFR to registered secondaries, NOTIFY on change). Its serial is the change id that
   * changed the list, so it only grows, across restarts too. Null when DNS_CATALOG_ZONE=off.
   */
  private rebuildCatalog(serial: number): Zone | null {
    const name = this.opts.config.dns.catalogZone;
    if (!name) return null;
    const records: StoredRecord[] = [{ name: 'version', record_type: 'TXT', data: '2', ttl: 0 }];
    for (const z of this.zones.values()) {
      if (z.name !== name) records.push({ name: `${crypto.createHash('sha1').update(z.name).digest('hex')}.zones`, record_type: 'PTR', data: `${z.name}.`, ttl: 0 });
    }
    const prev = this.zones.get(name);
    const next = Zone.build(name, serial, records, { ...this.settings, nameservers: ['invalid'], ttl: 0 });
    withHistory(prev, next);
    this.zones.set(next);
    return next;
  }

  private buildZone(domain: string, serial: number, records: Parameters<typeof Zone.build>[2]) {
    return Zone.build(domain, serial, records, this.settings, this.skipped(domain));
  }

  private skipped(domain: string) {
    return (rec: StoredRecord, reason: string) => this.log.warn({ domain, name: rec.name, record_type: rec.record_type, reason }, 'DNS record not served');
  }

  // ---- following the change log -------------------------------------------------------------

  /** Asks for a catch-up; `changeId` (a local signal) makes it retry briefly until that id is visible. */
  private wake(changeId?: number) {
    if (this.stopped) return;
    if (changeId !== undefined && changeId > this.chaseTarget) {
      this.chaseTarget = changeId;
      this.chaseUntil = Date.now() + CHASE_LIMIT_MS;
    }
    if (this.loaded) void this.sync();
  }

  /** Applies every change recorded so far (single-flight: a call during a run makes it run again). */
  sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          await this.applyChanges();
        } while (this.syncAgain && !this.stopped);
      } catch (err) {
        this.warn(err, 'DNS server could not read changes; retrying');
      } finally {
        this.syncing = null;
      }
      if (!this.stopped && this.appliedChangeId < this.chaseTarget && Date.now() < this.chaseUntil && !this.chaseTimer) {
        this.chaseTimer = setTimeout(() => {
          this.chaseTimer = null;
          void this.sync();
        }, CHASE_INTERVAL_MS);
      }
    })();
    return this.syncing;
  }

  private async applyChanges() {
    for (;;) {
      const changes = await this.repo.changesAfter(this.appliedChangeId, CHANGE_BATCH);
      if (!changes.length) break;
      const byDomain = new Map<string, ZoneChange[]>();
      for (const c of changes) {
        const list = byDomain.get(c.domain);
        if (list) list.push(c);
        else byDomain.set(c.domain, [c]);
      }
      for (const [domain, list] of byDomain) {
        const had = this.zones.get(domain) !== undefined;
        if (await this.apply(domain, list)) this.unannounced.add(domain);
        // A zone came or went: the catalog lists it. Remembered across a pass that fails later.
        if (had !== (this.zones.get(domain) !== undefined)) this.catalogDirty = true;
      }
      this.appliedChangeId = changes[changes.length - 1].id;
      if (changes.length < CHANGE_BATCH) break;
    }
    // The catalog again (also after the first catch-up at start, whatever was loaded then), with a
    // serial no earlier catalog had: the change id that made it.
    if (this.catalogDirty && this.rebuildCatalog(Math.max(1, this.appliedChangeId))) this.unannounced.add(this.opts.config.dns.catalogZone!);
    this.catalogDirty = false;
    // NOTIFY every zone whose serial moved, also those of a pass that failed after applying them.
    if (this.notifier && this.unannounced.size) {
      const secondaries = await this.loadSecondaries(0);
      for (const name of this.unannounced) {
        const zone = this.zones.get(name);
        if (zone) this.notifier.notify(zone, secondaries);
      }
    }
    this.unannounced.clear();
    // Tell waiting jobs at once, not at the next heartbeat.
    if (this.port !== null && this.appliedChangeId !== this.reported) await this.report();
  }

  /**
   * Applies one domain's changes of a batch; returns the zone when its serial moved (secondaries
   * are told). Changes that name their owners reload just those (issue 12 item 1), provided the
   * snapshot read is exactly the state after the last of them (its serial): a later change already
   * committed would otherwise be half seen (serial and history ahead of the records). Anything else
   * reloads the whole zone, which reads the current state: zones never go back in time.
   */
  private async apply(domain: string, changes: ZoneChange[]): Promise<Zone | null> {
    if (!this.serves(domain)) return null;
    const zone = this.zones.get(domain);
    const last = changes[changes.length - 1].serial;
    if (zone && last !== null && changes.every((c) => c.owners !== null)) {
      const owners = [...new Set(changes.flatMap((c) => c.owners!))];
      const rows = await this.repo.ownerRecords(domain, owners);
      if (!rows) {
        this.zones.delete(domain);
        return null;
      }
      if (rows.serial === last) {
        const from = zone.serial;
        const fromSoa = soaWire(zone);
        const diff = zone.replaceOwners(rows.serial, owners.map((o) => (o === '' ? domain : `${o}.${domain}`.toLowerCase())), rows.records, this.skipped(domain));
        addChange(zone, from, fromSoa, diff);
        return from !== zone.serial ? zone : null;
      }
    }
    const rows = await this.repo.zone(domain);
    if (!rows) {
      this.zones.delete(domain);
      return null;
    }
    const next = this.buildZone(rows.domain, rows.serial, rows.records);
    // IXFR: the new version remembers what changed since the old one (transfer-messages.ts).
    withHistory(zone, next);
    this.zones.set(next);
    return !zone || zone.serial !== next.serial ? next : null;
  }

  /**
   * Writes the row. Writes run one after another and each takes the applied id when it starts,
   * so a slow heartbeat can never land after, and undo, a newer report.
   */
  private report(): Promise<void> {
    const run = this.reportChain.then(async () => {
      const applied = this.appliedChangeId;
      await this.repo.heartbeat(this.id, applied, this.startedAt);
      this.reported = applied;
    });
    this.reportChain = run.catch(() => {});
    return run;
  }

  private async heartbeat() {
    // A database that hangs must not pile up heartbeats behind each other.
    if (this.stopped || this.beating) return;
    this.beating = true;
    try {
      await this.report();
      await this.loadSecondaries(0);
      await this.repo.purgeGone(Math.max(GONE_AFTER_MS, 10 * this.opts.config.dns.serverStaleMs));
      if (Date.now() - this.lastLogPurge > CHANGE_LOG_PURGE_EVERY_MS) {
        this.lastLogPurge = Date.now();
        await this.repo.purgeChanges(CHANGE_LOG_KEEP_MS);
      }
    } catch (err) {
      this.warn(err, 'DNS server heartbeat failed');
    } finally {
      this.beating = false;
    }
  }

  private async listenForNotifications() {
    const { store } = this.opts;
    if (!store.listen || this.stopped) return;
    try {
      this.unlisten = await store.listen(
        DNS_CHANNEL,
        (payload) => {
          if (payload === '' || payload === this.schema) this.wake();
        },
        (err) => {
          this.unlisten = null;
          this.warn(err, 'DNS server lost its LISTEN connection; polling until it is back');
          const t = setTimeout(() => void this.listenForNotifications(), 1000);
          t.unref();
          this.timers.push(t);
        },
      );
    } catch (err) {
      this.warn(err, 'DNS server cannot LISTEN; polling');
      const t = setTimeout(() => void this.listenForNotifications(), 1000);
      t.unref();
      this.timers.push(t);
    }
  }

  private warn(err: unknown, msg: string) {
    if (this.stopped || Date.now() - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = Date.now();
    this.log.warn({ err }, msg);
  }

  // ---- sockets --------------------------------------------------------------------------------

  private async bindSockets(host: string, port: number) {
    // Port 0: UDP picks a free port and TCP takes the same one; if TCP finds it taken, try again.
    for (let attempt = 0; ; attempt++) {
      const udp = await this.bindUdp(host, port);
      const bound = udp.port;
      try {
        this.tcp = await this.listenTcp(host, bound);
        this.udp = udp;
        this.port = bound;
        this.host = host;
        return;
      } catch (err) {
        await udp.close();
        if (port !== 0 || attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  private async bindUdp(host: string, port: number): Promise<UdpEndpoint> {
    // IPv4 unless the host is an IPv6 address; a host name is looked up once, here, as dgram would.
    const family = net.isIPv6(host) ? 6 : 4;
    const address = net.isIP(host) ? host : (await dnsLookup(host, { family })).address;
    const onError = (err: unknown) => this.warn(err, 'DNS UDP socket error');
    return bindUdp(address, port, family, this.opts.config.dns.udpBatch, (msg, peer) => {
      if (msg.length >= 12 && msg.readUInt16BE(10) > 0 && tsigOffset(msg) >= 0) {
        // Answered later: the message and the sender are copied now (both are only lent).
        const from = peer();
        void this.answerSigned(Buffer.from(msg), from.address, 'udp').then((outs) => {
          for (const out of outs) from.send(out);
        });
        return null;
      }
      return this.answer(msg, 'udp');
    }, onError);
  }

  private listenTcp(host: string, port: number): Promise<net.Server> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.serveTcp(socket));
      server.maxConnections = TCP_MAX_CONNECTIONS;
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', (err) => this.warn(err, 'DNS TCP server error'));
        resolve(server);
      });
    });
  }

  /** RFC 7766: two-byte length before each message; several queries per connection, answered in order. */
  private serveTcp(socket: net.Socket) {
    this.connections.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('error', () => {});
    socket.on('close', () => this.connections.delete(socket));
    let pending: Buffer = Buffer.alloc(0);
    let busy = false;
    const frame = (out: Buffer) => {
      const f = Buffer.allocUnsafe(2 + out.length);
      f.writeUInt16BE(out.length, 0);
      out.copy(f, 2);
      return f;
    };
    const drain = () => {
      while (!busy && pending.length >= 2) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        const qtype = questionType(msg);
        if (qtype === AXFR || qtype === IXFR || (msg.length >= 12 && msg.readUInt16BE(10) > 0 && tsigOffset(msg) >= 0)) {
          // Answered in order: the connection is paused until every message of this one is written.
          busy = true;
          socket.pause();
          void (async () => {
            try {
              for (const out of await this.answerSigned(msg, socket.remoteAddress ?? '', 'tcp')) {
                if (socket.destroyed) return;
                // A transfer may be large: follow the client's pace instead of buffering it all.
                if (!socket.write(frame(out))) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
              }
            } catch (err) {
              this.warn(err, 'DNS transfer failed');
              socket.destroy();
            } finally {
              busy = false;
              if (!socket.destroyed) {
                socket.resume();
                drain();
              }
            }
          })();
          return;
        }
        const out = this.answer(msg, 'tcp');
        if (!out) continue;
        socket.write(frame(out));
        if (socket.writableLength > TCP_MAX_BACKLOG) {
          socket.destroy();
          return;
        }
      }
    };
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      drain();
    });
  }

  // ---- secondaries: TSIG, transfers ------------------------------------------------------------

  /** The registered secondaries, read again when older than `maxAgeMs`; the last known ones when the store fails. */
  private async loadSecondaries(maxAgeMs: number): Promise<Secondary[]> {
    if (Date.now() - this.secondariesAt <= maxAgeMs) return this.secondaries;
    try {
      this.secondaries = await new SecondariesRepository(this.opts.store.db).all();
      this.secondariesAt = Date.now();
    } catch (err) {
      this.warn(err, 'DNS server could not read the secondaries; using the last known');
    }
    return this.secondaries;
  }

  /**
   * A transfer or a query signed with TSIG (RFC 8945): the replies to send, in order, signed when
   * the request verified. Transfers need a valid TSIG of a registered secondary, from that
   * secondary's address (the ACL); anything else is REFUSED or NOTAUTH.
   */
  private async answerSigned(msg: Buffer, remote: string, transport: 'udp' | 'tcp'): Promise<Buffer[]> {
    if (msg.length < 12 || msg.readUInt16BE(2) & 0x8000) return [];
    const qtype = questionType(msg);
    const transfer = qtype === AXFR || qtype === IXFR;
    const tsig = readTsig(msg);
    if (!tsig) {
      // An unsigned transfer (or a malformed TSIG record): refused, the zone's data stays private.
      if (transfer) return [this.errorReply(msg, REFUSED)];
      const out = this.answer(msg, transport);
      return out ? [out] : [];
    }
    const secondaries = await this.loadSecondaries(transfer ? 0 : SECONDARIES_FRESH_MS);
    const from = remote.replace(/^::ffff:/, '').toLowerCase();
    const keys = (name: string) => secondaries.find((s) => s.key.name === name)?.key;
    const v = verifyRequest(msg, tsig, keys);
    const unsigned = this.withoutTsig(msg, tsig);
    if (!v.ok) {
      this.log.info({ key: tsig.keyName, from, error: v.error }, 'DNS request with a bad TSIG refused');
      if (v.error === BADTIME && v.key) {
        return [new ResponseSigner(v.key, tsig.mac, tsig.originalId).sign(this.errorReply(unsigned, NOTAUTH), { error: BADTIME, other: timeOther() })];
      }
      return [unsignedTsigError(this.errorReply(unsigned, NOTAUTH), tsig, v.error)];
    }
    const signer = new ResponseSigner(v.key, tsig.mac, tsig.originalId);
    if (!transfer) {
      // Room for our TSIG record in a UDP reply: the query path truncates before it.
      const out = this.answer(unsigned, transport, 100 + v.key.name.length);
      return out ? [signer.sign(out)] : [];
    }
    // The ACL: the key must be that of a secondary registered at this address.
    if (!secondaries.some((s) => s.key.name === v.key.name && s.host.toLowerCase() === from)) {
      this.log.info({ key: tsig.keyName, from }, 'DNS transfer from an address not registered for its key refused');
      return [signer.sign(this.errorReply(unsigned, REFUSED))];
    }
    const q = parseQuestion(unsigned);
    const zone = q ? this.zones.get(q.key) : undefined;
    if (!q || !zone) return [signer.sign(this.errorReply(unsigned, NOTAUTH))];
    const id = msg.readUInt16BE(0);
    if (qtype === AXFR) {
      // RFC 5936 §4.2: no AXFR over UDP.
      if (transport === 'udp') return [signer.sign(this.errorReply(unsigned, REFUSED))];
      this.log.info({ zone: zone.name, serial: zone.serial, from, key: v.key.name }, 'DNS AXFR');
      return axfrMessages(zone, id, q.raw).map((m) => signer.sign(m));
    }
    const clientSerial = ixfrClientSerial(unsigned, 12 + q.raw.length);
    if (clientSerial === null) return [signer.sign(this.errorReply(unsigned, 1))];
    if (transport === 'udp') {
      // RFC 1995 §4: a UDP reply that would not fit is the current SOA alone (the client then uses TCP).
      const m = ixfrMessages(zone, id, q.raw, clientSerial);
      return [signer.sign(m.kind === 'current' ? m.messages[0] : ixfrMessages(zone, id, q.raw, zone.serial).messages[0])];
    }
    const { kind, messages } = ixfrMessages(zone, id, q.raw, clientSerial);
    this.log.info({ zone: zone.name, serial: zone.serial, clientSerial, kind, from, key: v.key.name }, 'DNS IXFR');
    return messages.map((m) => signer.sign(m));
  }

  /** The message without its TSIG record (ARCOUNT one less). */
  private withoutTsig(msg: Buffer, t: TsigRecord): Buffer {
    const m = Buffer.from(msg.subarray(0, t.start));
    m.writeUInt16BE(msg.readUInt16BE(10) - 1, 10);
    return m;
  }

  /** A reply with `rcode`, the question copied, nothing else. */
  private errorReply(msg: Buffer, rcode: number): Buffer {
    const q = parseQuestion(msg);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8000 | (msg.readUInt16BE(2) & 0x7910) | rcode, 2);
    header.writeUInt16BE(q ? 1 : 0, 4);
    return q ? Buffer.concat([header, q.raw]) : header;
  }

  private answer(msg: Buffer, transport: 'udp' | 'tcp', reserve?: number): Buffer | null {
    try {
      return answerQuery(this.zones, msg, { transport, reserve });
    } catch (err) {
      // answerQuery is meant to be total; if it is not, one bad packet must not stop the server.
      this.warn(err, 'DNS query handling failed');
      return null;
    }
  }

  // ---- stopping ---------------------------------------------------------------------------------

  /** Stops answering and following, and removes this server's row (so jobs stop waiting for it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.chaseTimer) clearTimeout(this.chaseTimer);
    this.unsubscribe?.();
    this.notifier?.stop();
    await this.unlisten?.().catch(() => {});
    const closing: Promise<void>[] = [];
    if (this.udp) {
      closing.push(this.udp.close());
    }
    if (this.tcp) {
      const tcp = this.tcp;
      closing.push(new Promise((resolve) => tcp.close(() => resolve())));
      for (const s of this.connections) s.destroy();
    }
    await Promise.all(closing);
    await this.syncing?.catch(() => {});
    // After any write still on its way, or it would bring the row back.
    await this.reportChain;
    if (this.port !== null) await this.repo.unregister(this.id).catch((err) => this.log.warn({ err }, 'DNS server could not unregister'));
    this.log.info({ server: this.id }, 'DNS server stopped');
  }
}

/** `startDnsServer({ store, config })`: DnsServer.start, for callers that prefer a function. */
export const startDnsServer = (opts: DnsServerOptions) => DnsServer.start(opts);
