// The authoritative DNS server (issue 3 item 3; docs/decisions/0003-dns-propagation.md): UDP and
// TCP on DNS_LISTEN, answering from in-memory zones that follow the store's change log.
//
// Keeping current: every change to served records appends to dns_changes (recordChange). This
// process applies the log in id order: for each new change it reloads that domain's zone from the
// store, then writes the last applied id to its dns_servers row, which job handlers read
// (isApplied). It learns of changes three ways, fastest first: an in-process signal (serve records
// and serves in one process), PostgreSQL NOTIFY, and polling every DNS_POLL_MS, which alone is
// enough (a lost signal only costs time).
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { currentSchema } from '../../db/dialect.js';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import { nowIso } from '../../db/time.js';
import { DNS_CHANNEL, onChangeRecorded } from './propagation.js';
import { answerQuery } from './query.js';
import { SOA_TIMERS, Zone, ZoneSet, type ZoneSettings } from './zone.js';
import { ZoneRepository } from './zone.repository.js';

export type DnsServerConfig = Pick<Config, 'dnsListen' | 'dnsDefaultTtl' | 'dns'>;

export interface DnsServerOptions {
  store: Store;
  config: DnsServerConfig;
  log?: FastifyBaseLogger;
  /** Overrides config.dnsListen: `'127.0.0.1:0'` picks a free port (see `port`). */
  listen?: string;
}

/** Zones loaded per round trip at start. */
const LOAD_PAGE = 500;
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

const silentLog = {
  info() {}, warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, child() { return silentLog; }, level: 'silent', silent() {},
} as unknown as FastifyBaseLogger;

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

  private readonly repo: ZoneRepository;
  private readonly settings: ZoneSettings;
  private readonly log: FastifyBaseLogger;
  private readonly startedAt = nowIso();
  private udp: dgram.Socket | null = null;
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
      for (const rows of await this.repo.zones(names)) this.zones.set(this.buildZone(rows.domain, rows.serial, rows.records));
      if (names.length < LOAD_PAGE) break;
      after = names[names.length - 1];
    }
    this.appliedChangeId = from;
    this.loaded = true;

    const bind = parseListen(this.opts.listen ?? this.opts.config.dnsListen);
    if (bind) {
      await this.bindSockets(bind.host, bind.port);
      await this.report();
      this.timers.push(setInterval(() => void this.heartbeat(), this.opts.config.dns.heartbeatMs).unref());
    }
    this.timers.push(setInterval(() => this.wake(), this.opts.config.dns.pollMs).unref());
    this.log.info({ dns: bind ? `${this.host}:${this.port}` : 'off', zones: this.zones.size, appliedChangeId: from, server: this.id }, 'DNS server ready');
    this.wake();
  }

  private buildZone(domain: string, serial: number, records: Parameters<typeof Zone.build>[2]) {
    return Zone.build(domain, serial, records, this.settings, (rec, reason) =>
      this.log.warn({ domain, name: rec.name, record_type: rec.record_type, reason }, 'DNS record not served'),
    );
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
      // Reloading reads the current state, which includes every change of the batch: one reload
      // per domain is enough, and the zones never go back in time.
      for (const domain of new Set(changes.map((c) => c.domain))) {
        const [rows] = await this.repo.zones([domain]);
        if (rows) this.zones.set(this.buildZone(rows.domain, rows.serial, rows.records));
        else this.zones.delete(domain);
      }
      this.appliedChangeId = changes[changes.length - 1].id;
      if (changes.length < CHANGE_BATCH) break;
    }
    // Tell waiting jobs at once, not at the next heartbeat.
    if (this.port !== null && this.appliedChangeId !== this.reported) await this.report();
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
      const bound = udp.address().port;
      try {
        this.tcp = await this.listenTcp(host, bound);
        this.udp = udp;
        this.port = bound;
        this.host = host;
        return;
      } catch (err) {
        udp.close();
        if (port !== 0 || attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  private bindUdp(host: string, port: number): Promise<dgram.Socket> {
    return new Promise((resolve, reject) => {
      const sock = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
      sock.once('error', reject);
      sock.bind(port, host, () => {
        sock.off('error', reject);
        sock.on('error', (err) => this.warn(err, 'DNS UDP socket error'));
        sock.on('message', (msg, rinfo) => {
          const out = this.answer(msg, 'udp');
          if (out) sock.send(out, rinfo.port, rinfo.address, () => {});
        });
        resolve(sock);
      });
    });
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
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 2) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        const out = this.answer(msg, 'tcp');
        if (!out) continue;
        const frame = Buffer.allocUnsafe(2 + out.length);
        frame.writeUInt16BE(out.length, 0);
        out.copy(frame, 2);
        socket.write(frame);
        if (socket.writableLength > TCP_MAX_BACKLOG) {
          socket.destroy();
          return;
        }
      }
    });
  }

  private answer(msg: Buffer, transport: 'udp' | 'tcp'): Buffer | null {
    try {
      return answerQuery(this.zones, msg, { transport });
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
    await this.unlisten?.().catch(() => {});
    const closing: Promise<void>[] = [];
    if (this.udp) {
      const udp = this.udp;
      closing.push(new Promise((resolve) => udp.close(() => resolve())));
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
