// All SQL of authentication: the per-request token lookup and a reseller's legacy password hash.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { precompiled } from '../db/precompiled.js';

export class AuthRepository {
  // Runs on every request: compiled once (src/db/precompiled.ts).
  private readonly byTokenHash;

  constructor(private readonly db: Kysely<Database>) {
    this.byTokenHash = precompiled(db, (hash: string) =>
      db
        .selectFrom('api_tokens')
        .innerJoin('contacts', 'contacts.id', 'api_tokens.contact_id')
        .innerJoin('customers', 'customers.id', 'contacts.customer_id')
        .select(['customers.id as customerId', 'customers.is_reseller', 'contacts.id as contactId'])
        .where('api_tokens.token_hash', '=', hash)
        .where('api_tokens.revoked_at', 'is', null),
    );
  }

  /** The active token with this hash, with its contact and customer. */
  tokenOwner(hash: string) {
    return this.byTokenHash.first(hash);
  }

  /** The legacy password hash of a reseller, if it has one. */
  async resellerLegacyHash(customerId: number): Promise<string | null> {
    const row = await this.db
      .selectFrom('customers')
      .select('legacy_password_hash')
      .where('id', '=', customerId)
      .where('is_reseller', '=', 1)
      .executeTakeFirst();
    return row?.legacy_password_hash ?? null;
  }
}
