// The SQL of DNSSEC (docs/decisions/0032-dnssec.md): whether a domain is signed, and its keys
// (migration 022), private halves sealed by security/secret-box.ts and opened only to sign.
import type { Kysely } from 'kysely';
import type { Database, DnssecKeyRole } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { secretBox, storeSealingKey, type SecretBox } from '../security/secret-box.js';
import { newPrivateKey, signingKey, type DnssecAlgorithm, type SigningKey } from './dnssec-keys.js';

/** A key a zone is signed with, and where it is in a rollover (migration 023). */
export interface ZoneKey {
  generation: number;
  role: DnssecKeyRole;
  key: SigningKey;
}

/** A key as the API shows it: no private half. */
export interface PublicKeyRow {
  generation: number;
  role: DnssecKeyRole;
  algorithm: number;
  flags: number;
  key_tag: number;
  public_key: string;
}

export class DnssecRepository {
  private box: SecretBox | null = null;

  /** `secretKeys`: WEBHOOK_SECRET_KEY's keys (the store's own key seals without them). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKeys: string[],
  ) {}

  private async sealer(): Promise<SecretBox> {
    this.box ??= secretBox(this.secretKeys, await storeSealingKey(this.db));
    return this.box;
  }

  /**
   * The newest signing key of `domain`, made (algorithm `algorithm`) when it has none; servers that
   * race to make it end with the same one (unique domain + generation): `await repo.signingKey('example.com', 13)`.
   */
  async signingKey(domain: string, algorithm: DnssecAlgorithm): Promise<SigningKey> {
    const box = await this.sealer();
    let row = await this.newest(domain);
    if (!row) {
      const pem = newPrivateKey(algorithm);
      const key = signingKey(pem, algorithm);
      await this.db
        .insertInto('dnssec_keys')
        .values({
          domain, generation: 1, algorithm, flags: key.flags, key_tag: key.keyTag,
          public_key: key.dnskey.subarray(4).toString('base64'), private_key: box.seal(pem), created_at: nowIso(),
        })
        .onConflict((oc) => oc.columns(['domain', 'generation']).doNothing())
        .execute();
      row = await this.newest(domain);
      if (!row) throw new Error(`the DNSSEC key of ${domain} could not be stored`);
    }
    return signingKey(box.open(row.private_key), row.algorithm as DnssecAlgorithm, row.flags);
  }

  /**
   * Every key of `domain` with its role, private halves opened, oldest first; the first key made
   * when there is none: what a DNS server signs the zone with (`await repo.zoneKeys('example.com', 13)`).
   */
  async zoneKeys(domain: string, algorithm: DnssecAlgorithm): Promise<ZoneKey[]> {
    await this.signingKey(domain, algorithm);
    const box = await this.sealer();
    const rows = await this.db
      .selectFrom('dnssec_keys')
      .select(['generation', 'algorithm', 'flags', 'private_key', 'role'])
      .where('domain', '=', domain)
      .orderBy('generation')
      .execute();
    return rows.map((r) => ({ generation: r.generation, role: r.role, key: signingKey(box.open(r.private_key), r.algorithm as DnssecAlgorithm, r.flags) }));
  }

  /** A new generation of `domain`'s key, `incoming` (a rollover's first step); its generation. */
  async addIncoming(domain: string, algorithm: DnssecAlgorithm, now: string): Promise<number> {
    const box = await this.sealer();
    const last = await this.db.selectFrom('dnssec_keys').select((eb) => eb.fn.max('generation').as('g')).where('domain', '=', domain).executeTakeFirst();
    const generation = Number(last?.g ?? 0) + 1;
    const pem = newPrivateKey(algorithm);
    const key = signingKey(pem, algorithm);
    await this.db
      .insertInto('dnssec_keys')
      .values({
        domain, generation, algorithm, flags: key.flags, key_tag: key.keyTag, role: 'incoming', role_at: now,
        public_key: key.dnskey.subarray(4).toString('base64'), private_key: box.seal(pem), created_at: now,
      })
      .execute();
    return generation;
  }

  /** Sets the role of `domain`'s keys that have role `from`. */
  async setRole(domain: string, from: DnssecKeyRole, to: DnssecKeyRole, now: string): Promise<void> {
    await this.db.updateTable('dnssec_keys').set({ role: to, role_at: now }).where('domain', '=', domain).where('role', '=', from).execute();
  }

  /** A domain's choice and DNSSEC phase (undefined when it is gone). */
  phaseOf(domain: string) {
    return this.db
      .selectFrom('domains')
      .select(['name', 'dnssec', 'dnssec_phase', 'dnssec_phase_at', 'dnssec_parent_at', 'dnssec_ds_ttl'])
      .where('name', '=', domain)
      .executeTakeFirst();
  }

  /** Withdraws `domain`'s keys of role `role` for good. */
  async remove(domain: string, role: DnssecKeyRole): Promise<void> {
    await this.db.deleteFrom('dnssec_keys').where('domain', '=', domain).where('role', '=', role).execute();
  }

  private newest(domain: string) {
    return this.db.selectFrom('dnssec_keys').select(['algorithm', 'flags', 'private_key']).where('domain', '=', domain).orderBy('generation', 'desc').limit(1).executeTakeFirst();
  }

  /** The public halves of the keys of `domains`, each domain's oldest first. */
  publicKeysOf(domains: string[]): Promise<(PublicKeyRow & { domain: string })[]> {
    return this.db
      .selectFrom('dnssec_keys')
      .select(['domain', 'generation', 'algorithm', 'flags', 'key_tag', 'public_key', 'role'])
      .where('domain', 'in', domains)
      .orderBy('domain')
      .orderBy('generation')
      .execute();
  }

  /** The public halves of a domain's keys, oldest first. */
  publicKeys(domain: string): Promise<PublicKeyRow[]> {
    return this.db.selectFrom('dnssec_keys').select(['generation', 'algorithm', 'flags', 'key_tag', 'public_key', 'role']).where('domain', '=', domain).orderBy('generation').execute();
  }
}
