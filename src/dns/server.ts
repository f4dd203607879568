// The authoritative DNS server (docs/decisions/0003-dns-propagation.md): UDP and
// TCP on DNS_LISTEN, answering from in-memory zones that follow the store's change log. Three
// parts share the zones: change-follower.ts loads them and keeps them current (and this server's
// dns_servers row), sockets.ts listens and answers, transfers.ts serves the secondaries (TSIG,
// AXFR/IXFR, NOTIFY; docs/decisions/0013-dns-secondaries.md). Here they are started and stopped
// in turn.
import crypto from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { ChangeFollower } from './change-follower.js';
import { DnsSockets } from './sockets.js';
import { Transfers } from './transfers.js';
import type { UdpEndpoint } from './udp.js';
import { SOA_TIMERS, ZoneSet, type ZoneSettings } from './zone.js';

export type DnsServerConfig = Pick<Config, 'dnsListen' | 'dnsDefaultTtl' | 'dns' | 'webhooks'>;

export interface DnsServerOptions {
  store: Store;
  config: DnsServerConfig;
  log?: FastifyBaseLogger;
  /** Overrides config.dnsListen: `'127.0.0.1:0'` picks a free port (see `port`). */
  listen?: string;
}

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
  get appliedChangeId(): number {
    return this.changes.appliedChangeId;
  }

  /** The bound UDP/TCP port (the same for both), or null when not listening. */
  get port(): number | null {
    return this.sockets.port;
  }

  get host(): string | null {
    return this.sockets.host;
  }

  /** How UDP is read: 'batch' (the native reader) or 'dgram'; null when not listening. */
  get udpKind(): UdpEndpoint['kind'] | null {
    return this.sockets.udp?.kind ?? null;
  }

  private readonly log: FastifyBaseLogger;
  private readonly changes: ChangeFollower;
  private readonly sockets: DnsSockets;
  private readonly transfers: Transfers;
  private stopped = false;
  private lastWarn = 0;

  private constructor(private readonly opts: DnsServerOptions) {
    this.log = opts.log ?? silentLog;
    const warn = (err: unknown, msg: string) => this.warn(err, msg);
    // The sockets hand transfers and signed queries to the signed path, which answers the
    // ordinary queries among them as the sockets do.
    this.sockets = new DnsSockets({ zones: this.zones, udpBatch: opts.config.dns.udpBatch, warn, answerSigned: (msg, remote, transport) => this.transfers.answerSigned(msg, remote, transport) });
    this.transfers = new Transfers({ zones: this.zones, store: opts.store, log: this.log, warn, answer: (msg, transport, reserve) => this.sockets.answer(msg, transport, reserve) });
    this.changes = new ChangeFollower({ id: this.id, zones: this.zones, store: opts.store, config: opts.config, settings: zoneSettings(opts.config), log: this.log, warn, transfers: this.transfers });
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
    const from = await this.changes.load();
    await this.transfers.loadSecondaries(0);

    const bind = parseListen(this.opts.listen ?? this.opts.config.dnsListen);
    if (bind) {
      this.transfers.startNotifying();
      await this.sockets.bind(bind.host, bind.port);
      const udp = this.sockets.udp;
      if (udp?.notBatch) this.log.warn(`DNS UDP read by node's dgram (about half the queries per second): ${udp.notBatch}`);
      await this.changes.register();
    }
    this.changes.poll();
    this.log.info({ dns: bind ? `${this.host}:${this.port}` : 'off', udp: this.udpKind, zones: this.zones.size, appliedChangeId: from, server: this.id }, 'DNS server ready');
    this.changes.wake();
  }

  /** Applies every change recorded so far (single-flight: a call during a run makes it run again). */
  sync(): Promise<void> {
    return this.changes.sync();
  }

  private warn(err: unknown, msg: string) {
    if (this.stopped || Date.now() - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = Date.now();
    this.log.warn({ err }, msg);
  }

  /** Stops answering and following, and removes this server's row (so jobs stop waiting for it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.transfers.stop();
    await this.changes.halt();
    await this.sockets.close();
    await this.changes.leave();
    this.log.info({ server: this.id }, 'DNS server stopped');
  }
}

/** `startDnsServer({ store, config })`: DnsServer.start, for callers that prefer a function. */
export const startDnsServer = (opts: DnsServerOptions) => DnsServer.start(opts);
