// Keeps a DNS server's zones current: applies dns_changes in id order (the owners a change names,
// or the whole zone), then records the last applied id, which jobs wait for (decision 0003). Woken
// by the Store's signal or PostgreSQL NOTIFY; polling every DNS_POLL_MS alone would suffice.
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { currentSchema } from '../db/dialect.js';
import type { Store } from '../db/index.js';
import { nowIso } from '../db/time.js';
import { DNS_CHANGE_SIGNAL, DNS_CHANNEL } from '../provisioning/dns/propagation.js';
import type { StoredRecord } from './rdata.js';
import { addChange, soaWire, withHistory } from './transfer-messages.js';
import type { Transfers } from './transfers.js';
import { Zone, type ZoneSet, type ZoneSettings } from './zone.js';
import { ZoneRepository, type ZoneChange, type ZoneRows } from './zone.repository.js';
import { DnssecLifecycle } from './dnssec-lifecycle.js';
import { SignedZones } from './signed-zones.js';
import { ChangeLogRepository } from '../provisioning/dns/change-log.repository.js';

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

export interface ChangeFollowerOptions {
  /** The server's row in dns_servers. */
  id: string;
  /** The zones the server answers from: loaded and kept current here. */
  zones: ZoneSet;
  store: Store;
  config: Pick<Config, 'dns' | 'webhooks' | 'dnsDefaultTtl'>;
  settings: ZoneSettings;
  log: FastifyBaseLogger;
  /** The server's warning, at most one per interval. */
  warn: (err: unknown, msg: string) => void;
  /** Told of zones whose serial moved; asked again for the secondaries at each heartbeat. */
  transfers: Transfers;
}

/**
 * Loads the zones and follows the change log: `await follower.load()`, `await follower.register()`
 * once the server listens, `follower.poll()`; `await follower.halt()` … `await follower.leave()`.
 */
export class ChangeFollower {
  /** Every change up to this id is in `zones`. */
  appliedChangeId = 0;

  private readonly id: string;
  private readonly zones: ZoneSet;
  private readonly repo: ZoneRepository;
  private readonly settings: ZoneSettings;
  private readonly log: FastifyBaseLogger;
  private readonly warn: (err: unknown, msg: string) => void;
  private readonly transfers: Transfers;
  private readonly signed: SignedZones;
  private readonly lifecycle: DnssecLifecycle;
  private readonly startedAt = nowIso();
  /** The server listens and has a dns_servers row (jobs wait for it). */
  private registered = false;
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
  /** Zones added or removed since the catalog was built (true at start: built again after the first catch-up). */
  private catalogDirty = true;
  /** Zones whose serial moved and whose NOTIFY is not sent yet. */
  private readonly unannounced = new Set<string>();

  constructor(private readonly opts: ChangeFollowerOptions) {
    this.id = opts.id;
    this.zones = opts.zones;
    this.repo = new ZoneRepository(opts.store.db);
    this.settings = opts.settings;
    this.log = opts.log;
    this.warn = opts.warn;
    this.transfers = opts.transfers;
    this.signed = new SignedZones(opts.store, opts.config);
    this.lifecycle = new DnssecLifecycle(opts.store, opts.config);
  }

  /**
   * Subscribes to changes, then loads every zone; returns the change id the zones are at (every
   * later change is replayed).
   */
  async load(): Promise<number> {
    const { store } = this.opts;
    // Signals first, so nothing recorded while the zones load goes unnoticed.
    this.unsubscribe = store.signals.on<number>(DNS_CHANGE_SIGNAL, (id) => this.wake(id));
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
        if (rows && this.serves(rows.domain)) this.zones.set(await this.buildZone(rows));
      }
      if (names.length < LOAD_PAGE) break;
      after = names[names.length - 1];
    }
    this.appliedChangeId = from;
    this.rebuildCatalog(Math.max(1, from));
    this.loaded = true;
    return from;
  }

  /** Writes this server's row (it listens now: jobs wait for it) and keeps it fresh every DNS_HEARTBEAT_MS. */
  async register(): Promise<void> {
    this.registered = true;
    await this.report();
    this.timers.push(setInterval(() => void this.heartbeat(), this.opts.config.dns.heartbeatMs).unref());
  }

  /** Looks for changes every DNS_POLL_MS, whether signalled or not. */
  poll(): void {
    this.timers.push(setInterval(() => this.wake(), this.opts.config.dns.pollMs).unref());
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
   * AXFR/IXFR to registered secondaries, NOTIFY on change). Its serial is one past the change id
   * that changed the list, so it only grows, across restarts too. Null when DNS_CATALOG_ZONE=off.
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

  /** The zone of `rows`, signed when the domain is (docs/decisions/0032-dnssec.md). */
  private async buildZone(rows: ZoneRows): Promise<Zone> {
    const zone = Zone.build(rows.domain, rows.serial, rows.records, this.settings, this.skipped(rows.domain));
    if (this.signed.wants(rows)) await this.signed.sign(zone, rows.dnssecPhase, this.zones.get(rows.domain));
    return zone;
  }

  private skipped(domain: string) {
    return (rec: StoredRecord, reason: string) => this.log.warn({ domain, name: rec.name, record_type: rec.record_type, reason }, 'DNS record not served');
  }

  /** Asks for a catch-up; `changeId` (a local signal) makes it retry briefly until that id is visible. */
  wake(changeId?: number) {
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
    // serial no earlier catalog had: one past the change id that made it (the empty catalog before
    // any change is 1, so the first zone's catalog is newer than it for a secondary holding it).
    if (this.catalogDirty && this.rebuildCatalog(this.appliedChangeId + 1)) this.unannounced.add(this.opts.config.dns.catalogZone!);
    this.catalogDirty = false;
    // NOTIFY every zone whose serial moved, also those of a pass that failed after applying them.
    await this.transfers.announce(this.unannounced);
    this.unannounced.clear();
    // Tell waiting jobs at once, not at the next heartbeat.
    if (this.registered && this.appliedChangeId !== this.reported) await this.report();
  }

  /**
   * Applies one domain's changes of a batch; returns the zone when its serial moved (secondaries
   * are told). Changes that name their owners reload just those
   * (docs/decisions/0014-dns-zones-in-wire-form.md), provided the snapshot read is exactly the
   * state after the last of them (its serial): a later change already committed would otherwise be
   * half seen (serial and history ahead of the records). Anything else reloads the whole zone,
   * which reads the current state: zones never go back in time.
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
      // Signed or unsigned as before: a zone that changes sides is built whole again.
      if (rows.serial === last && this.signed.wants(rows) === (zone.signer !== null)) {
        const from = zone.serial;
        const fromSoa = soaWire(zone);
        const absolute = owners.map((o) => (o === '' ? domain : `${o}.${domain}`.toLowerCase()));
        const diff = zone.signer
          ? this.signed.replaceOwners(zone, rows.serial, absolute, rows.records, this.skipped(domain))
          : zone.replaceOwners(rows.serial, absolute, rows.records, this.skipped(domain));
        if (diff) addChange(zone, from, fromSoa, diff);
        else zone.history = [];
        return from !== zone.serial ? zone : null;
      }
    }
    const rows = await this.repo.zone(domain);
    if (!rows) {
      this.zones.delete(domain);
      return null;
    }
    const next = await this.buildZone(rows);
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
      await this.transfers.loadSecondaries(0);
      await this.resignDue();
      // DNSSEC phases (turning off, rollovers) whose next step is due take it here.
      if ((await this.lifecycle.advance()).length) this.wake();
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

  /**
   * Zones whose signatures run out within DNS_DNSSEC_REFRESH_S get a change of the whole zone in the
   * store: a new serial, so every DNS server signs them again and the secondaries take the new
   * signatures (docs/decisions/0032-dnssec.md).
   */
  private async resignDue() {
    const due = this.signed.due(this.zones.values());
    if (!due.length) return;
    const log = new ChangeLogRepository(this.opts.store.db);
    for (const domain of due) {
      const id = await log.appendChange(domain);
      this.log.info({ domain, change: id }, 'DNSSEC signatures due: zone signed again');
    }
    this.wake();
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

  /** Stops following: timers, signals and LISTEN end (a catch-up under way finishes: see leave). */
  async halt(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.chaseTimer) clearTimeout(this.chaseTimer);
    this.unsubscribe?.();
    await this.unlisten?.().catch(() => {});
  }

  /** After halt: waits for the catch-up and row writes under way, then removes the row (jobs stop waiting for this server). */
  async leave(): Promise<void> {
    await this.syncing?.catch(() => {});
    // After any write still on its way, or it would bring the row back.
    await this.reportChain;
    if (this.registered) await this.repo.unregister(this.id).catch((err) => this.log.warn({ err }, 'DNS server could not unregister'));
  }
}
