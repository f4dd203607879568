// The SQL of DNSSEC (docs/decisions/0032-dnssec.md): whether a domain is signed, and its keys
// (migration 022), private halves sealed by security/secret-box.ts and opened only to sign.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { nowIso } from '../db/time.js';
import { secretBox, storeSealingKey, type SecretBox } from '../security/secret-box.js';
import { newPrivateKey, signingKey, type DnssecAlgorithm, type SigningKey } from './dnssec-keys.js';

/** A key as the API shows it: no private half. */
export interface PublicKeyRow {
  generation: number;
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

  private newest(domain: string) {
    return this.db.selectFrom('dnssec_keys').select(['algorithm', 'flags', 'private_key']).where('domain', '=', domain).orderBy('generation', 'desc').limit(1).executeTakeFirst();
  }

  /** The public halves of the keys of `domains`, each domain's oldest first. */
  publicKeysOf(domains: string[]): Promise<(PublicKeyRow & { domain: string })[]> {
    return this.db
      .selectFrom('dnssec_keys')
      .select(['domain', 'generation', 'algorithm', 'flags', 'key_tag', 'public_key'])
      .where('domain', 'in', domains)
      .orderBy('domain')
      .orderBy('generation')
      .execute();
  }

  /** The public halves of a domain's keys, oldest first. */
  publicKeys(domain: string): Promise<PublicKeyRow[]> {
    return this.db.selectFrom('dnssec_keys').select(['generation', 'algorithm', 'flags', 'key_tag', 'public_key']).where('domain', '=', domain).orderBy('generation').execute();
  }
}
