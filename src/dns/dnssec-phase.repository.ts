// The SQL of the DNSSEC lifecycle (migration 023; docs/decisions/0032-dnssec.md "Key lifecycle"): a
// domain's choice and phase, and the conditional updates that take a step (of several DNS servers
// that find a step due, one takes it).
import type { Kysely } from 'kysely';
import type { Database, DnssecPhase } from '../db/schema.js';
import { nowIso } from '../db/time.js';

/** A domain's DNSSEC choice and where its lifecycle is, as its row holds it. */
export interface PhaseRow {
  name: string;
  has_presence: number;
  dnssec: number | null;
  dnssec_phase: DnssecPhase | null;
  dnssec_phase_at: string | null;
  dnssec_parent_at: string | null;
  dnssec_ds_ttl: number | null;
}

type PhaseValues = Partial<Pick<PhaseRow, 'dnssec' | 'dnssec_phase' | 'dnssec_phase_at' | 'dnssec_parent_at' | 'dnssec_ds_ttl'>>;

const COLUMNS = ['name', 'has_presence', 'dnssec', 'dnssec_phase', 'dnssec_phase_at', 'dnssec_parent_at', 'dnssec_ds_ttl'] as const;

export class DnssecPhaseRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** A domain's choice and phase (undefined when it is gone). */
  phaseOf(domain: string): Promise<PhaseRow | undefined> {
    return this.db.selectFrom('domains').select(COLUMNS).where('name', '=', domain).executeTakeFirst();
  }

  /** The presence domains in a phase (found by the index on dnssec_phase). */
  inPhase(): Promise<PhaseRow[]> {
    return this.db.selectFrom('domains').select(COLUMNS).where('has_presence', '=', 1).where('dnssec_phase', 'is not', null).execute();
  }

  /** Presence domains in no phase whose active key has been active since before `before`. */
  activeSince(before: string) {
    return this.db
      .selectFrom('domains as d')
      .innerJoin('dnssec_keys as k', (j) => j.onRef('k.domain', '=', 'd.name').on('k.role', '=', 'active'))
      .select(['d.name', 'd.dnssec'])
      .where('d.has_presence', '=', 1)
      .where('d.dnssec_phase', 'is', null)
      .where((eb) => eb(eb.fn.coalesce('k.role_at', 'k.created_at'), '<', before))
      .execute();
  }

  /** The largest TTL among a domain's records (0 for none). */
  async maxTtl(domain: string): Promise<number> {
    const r = await this.db.selectFrom('dns_records').select((eb) => eb.fn.max('ttl').as('ttl')).where('domain', '=', domain).executeTakeFirst();
    return Number(r?.ttl ?? 0);
  }

  /** Sets the choice and phase columns of `domain` unconditionally (the caller holds its row). */
  async set(domain: string, values: PhaseValues): Promise<void> {
    await this.db.updateTable('domains').set(values).where('name', '=', domain).execute();
  }

  /** Sets `values` only if the row is still in the phase step `row` was read in; whether it was. */
  async move(row: PhaseRow, values: PhaseValues): Promise<boolean> {
    let q = this.db.updateTable('domains').set(values).where('name', '=', row.name);
    q = row.dnssec_phase === null ? q.where('dnssec_phase', 'is', null) : q.where('dnssec_phase', '=', row.dnssec_phase);
    q = row.dnssec_phase_at === null ? q.where('dnssec_phase_at', 'is', null) : q.where('dnssec_phase_at', '=', row.dnssec_phase_at);
    q = row.dnssec_parent_at === null ? q.where('dnssec_parent_at', 'is', null) : q.where('dnssec_parent_at', '=', row.dnssec_parent_at);
    return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
  }

  /** Starts a rollover of a domain in no phase; false when it is in one. */
  async startRolling(domain: string, at: string): Promise<boolean> {
    const r = await this.db.updateTable('domains').set({ dnssec_phase: 'rolling', dnssec_phase_at: at, dnssec_parent_at: null }).where('name', '=', domain).where('dnssec_phase', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The parent holds what the step asks: noted once, for a domain in a phase that awaits it. */
  async parentSeen(domain: string): Promise<boolean> {
    const r = await this.db
      .updateTable('domains')
      .set({ dnssec_parent_at: nowIso() })
      .where('name', '=', domain)
      .where('dnssec_phase', 'is not', null)
      .where('dnssec_parent_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
