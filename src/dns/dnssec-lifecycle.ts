// The DNSSEC key lifecycle of signed zones (docs/decisions/0032-dnssec.md "Key lifecycle"; RFC 7583
// timing for a combined signing key, RFC 7344/8078 for CDS/CDNSKEY). Each DNS server's heartbeat
// moves the zones whose phase is due to their next step; every step is a conditional update of the
// domain's row (so of several servers one takes it) and a change of the whole zone, which every
// server applies by signing the zone as the step says.
//
// - disabling: CDS/CDNSKEY in their delete form → the parent has no DS any more (asked, or the
//   operator's ds-seen) → its DS TTL + propagation later: the zone is served unsigned.
// - rolling: the new key published and signing beside the old → max(DNSKEY TTL, zone max TTL) +
//   propagation later: CDS/CDNSKEY name the new key → the parent's DS names it → its DS TTL +
//   propagation later: the old key and its signatures are withdrawn.
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import type { Database, DnssecPhase } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { recordChange } from '../provisioning/dns/propagation.js';
import { DnssecRepository } from './dnssec.repository.js';
import { dsText, publicKey } from './dnssec-keys.js';
import { parentHolds } from './dnssec-parent.js';

/** A domain in a phase, as its row holds it. */
export interface PhaseRow {
  name: string;
  dnssec_phase: DnssecPhase | null;
  dnssec_phase_at: string | null;
  dnssec_parent_at: string | null;
  dnssec_ds_ttl: number | null;
}

/** What a zone in a phase waits for next (status, GET view). */
export type Awaited = { kind: 'parent'; ds: string | 'none' } | { kind: 'time'; until: string } | null;

const seconds = (iso: string) => Date.parse(iso) / 1000;

export class DnssecLifecycle {
  constructor(
    private readonly store: Store,
    private readonly config: Pick<Config, 'dns' | 'webhooks' | 'dnsDefaultTtl'>,
  ) {}

  private get s() {
    return this.config.dns.dnssec;
  }

  /**
   * Starts a rollover of a signed, steady zone in `trx` (the caller holds the domain's row): the
   * next generation is made `incoming`, published and signing beside the active key; false when
   * the zone is not signed or already in a phase.
   */
  async startRollover(trx: Kysely<Database>, domain: string, signed: boolean): Promise<number | null> {
    if (!signed) return null;
    const at = nowIso();
    // Conditional: of two servers that find the same zone due, one starts it.
    const r = await trx.updateTable('domains').set({ dnssec_phase: 'rolling', dnssec_phase_at: at, dnssec_parent_at: null }).where('name', '=', domain).where('dnssec_phase', 'is', null).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return null;
    await new DnssecRepository(trx, this.config.webhooks.secretKeys).addIncoming(domain, this.s.algorithm, at);
    return recordChange(trx, this.store.signals, domain);
  }

  private lastRolloverCheck = 0;

  /** DNS_DNSSEC_ROLLOVER_DAYS: steady signed zones whose active key is that old start a rollover (checked once a minute). */
  private async rolloversDue(now: number): Promise<string[]> {
    if (!this.s.rolloverDays || now - this.lastRolloverCheck < 60_000) return [];
    this.lastRolloverCheck = now;
    const before = new Date(now - this.s.rolloverDays * 86_400_000).toISOString();
    const rows = await this.store.db
      .selectFrom('domains as d')
      .innerJoin('dnssec_keys as k', (j) => j.onRef('k.domain', '=', 'd.name').on('k.role', '=', 'active'))
      .select(['d.name', 'd.dnssec'])
      .where('d.has_presence', '=', 1)
      .where('d.dnssec_phase', 'is', null)
      .where((eb) => eb(eb.fn.coalesce('k.role_at', 'k.created_at'), '<', before))
      .execute();
    const started: string[] = [];
    for (const r of rows) {
      const signed = r.dnssec === null ? this.s.default : r.dnssec === 1;
      if (await this.store.db.transaction().execute((trx) => this.startRollover(trx, r.name, signed))) started.push(r.name);
    }
    return started;
  }

  /** Moves every zone whose step is due; returns the domains that took a step. */
  async advance(now = Date.now()): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom('domains')
      .select(['name', 'dnssec_phase', 'dnssec_phase_at', 'dnssec_parent_at', 'dnssec_ds_ttl'])
      .where('has_presence', '=', 1)
      .where('dnssec_phase', 'is not', null)
      .execute();
    const moved: string[] = await this.rolloversDue(now);
    for (const row of rows) if (await this.step(row, now)) moved.push(row.name);
    return moved;
  }

  /** The parent's DS the current step waits for: `none` while disabling, else the active key's DS. */
  async wantedDs(db: Kysely<Database>, row: PhaseRow): Promise<string | 'none'> {
    if (row.dnssec_phase === 'disabling') return 'none';
    const keys = await new DnssecRepository(db, []).publicKeys(row.name);
    const active = keys.find((k) => k.role === 'active');
    return active ? dsText(row.name, publicKey(active.flags, active.algorithm, active.public_key)) : 'none';
  }

  /** What `row` waits for now; null when it is steady. */
  async awaited(db: Kysely<Database>, row: PhaseRow): Promise<Awaited> {
    if (!row.dnssec_phase || !row.dnssec_phase_at) return null;
    const keys = await new DnssecRepository(db, []).publicKeys(row.name);
    if (row.dnssec_phase === 'rolling' && keys.some((k) => k.role === 'incoming')) {
      return { kind: 'time', until: new Date((seconds(row.dnssec_phase_at) + (await this.publishWait(db, row.name))) * 1000).toISOString() };
    }
    if (!row.dnssec_parent_at) return { kind: 'parent', ds: await this.wantedDs(db, row) };
    return { kind: 'time', until: new Date((seconds(row.dnssec_parent_at) + this.dsWait(row)) * 1000).toISOString() };
  }

  /** RFC 7583 §3.3.1 Ipub + propagation: the largest TTL a cache may hold of the zone, and the way there. */
  private async publishWait(db: Kysely<Database>, domain: string): Promise<number> {
    const r = await db.selectFrom('dns_records').select((eb) => eb.fn.max('ttl').as('ttl')).where('domain', '=', domain).executeTakeFirst();
    return Math.max(this.config.dnsDefaultTtl, Number(r?.ttl ?? 0)) + this.s.propagationS;
  }

  /** The parent's DS TTL (as seen, else DNS_DNSSEC_DS_TTL_S) + propagation. */
  private dsWait(row: PhaseRow): number {
    return (row.dnssec_ds_ttl ?? this.s.dsTtlS) + this.s.propagationS;
  }

  /** One zone's next step, when it is due; true when it was taken here. */
  private async step(row: PhaseRow, nowMs: number): Promise<boolean> {
    const now = nowMs / 1000;
    const db = this.store.db;
    const phaseAt = row.dnssec_phase_at ? seconds(row.dnssec_phase_at) : 0;
    const keys = await new DnssecRepository(db, []).publicKeys(row.name);
    if (row.dnssec_phase === 'rolling' && keys.some((k) => k.role === 'incoming')) {
      if (now < phaseAt + (await this.publishWait(db, row.name))) return false;
      // The new key is in every cache's DNSKEY set: CDS/CDNSKEY name it from now on.
      return this.take(row, { dnssec_phase_at: nowIso(), dnssec_parent_at: null }, async (repo, at) => {
        await repo.setRole(row.name, 'active', 'outgoing', at);
        await repo.setRole(row.name, 'incoming', 'active', at);
      });
    }
    if (!row.dnssec_parent_at) {
      if (!this.s.parent.length) return false;
      const { held, ttl } = await parentHolds(this.s.parent, row.name, await this.wantedDs(db, row));
      // The TTL as the parent serves it, kept for the wait after it is gone (disabling).
      if (ttl !== null && ttl !== row.dnssec_ds_ttl) await db.updateTable('domains').set({ dnssec_ds_ttl: ttl }).where('name', '=', row.name).execute();
      if (held) await this.parentSeen(row.name);
      return false;
    }
    if (now < seconds(row.dnssec_parent_at) + this.dsWait(row)) return false;
    const last = { dnssec_phase: null, dnssec_phase_at: null, dnssec_parent_at: null } as const;
    // No cache holds the old DS any more: the old key (or every signature) goes.
    if (row.dnssec_phase === 'rolling') return this.take(row, last, (repo) => repo.remove(row.name, 'outgoing'));
    return this.take(row, last, async () => {});
  }

  /** The parent holds what the current step's CDS asks (asked, or the operator's ds-seen). */
  async parentSeen(domain: string, db: Kysely<Database> = this.store.db): Promise<boolean> {
    const r = await db
      .updateTable('domains')
      .set({ dnssec_parent_at: nowIso() })
      .where('name', '=', domain)
      .where('dnssec_phase', 'is not', null)
      .where('dnssec_parent_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Takes a step: the row moves on only if it is as read (another server may have taken it), the
   * keys change as `keys` says, and a change of the whole zone is recorded, in one transaction.
   */
  private async take(row: PhaseRow, set: Partial<Omit<PhaseRow, 'name'>>, keys: (repo: DnssecRepository, at: string) => Promise<void>): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      let q = trx.updateTable('domains').set(set).where('name', '=', row.name).where('dnssec_phase', '=', row.dnssec_phase);
      q = row.dnssec_phase_at === null ? q.where('dnssec_phase_at', 'is', null) : q.where('dnssec_phase_at', '=', row.dnssec_phase_at);
      q = row.dnssec_parent_at === null ? q.where('dnssec_parent_at', 'is', null) : q.where('dnssec_parent_at', '=', row.dnssec_parent_at);
      if (Number((await q.executeTakeFirst()).numUpdatedRows) === 0) return false;
      await keys(new DnssecRepository(trx, this.config.webhooks.secretKeys), nowIso());
      await recordChange(trx, this.store.signals, row.name);
      return true;
    });
  }
}
