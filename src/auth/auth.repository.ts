// All SQL of authentication: the per-request token (or panel session) lookup, the token's owner as a derived table for
// reads that check the token in their own statement, and a reseller's legacy password hash.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { precompiled } from '../db/precompiled.js';

/**
 * What decides, beside the owner, whether and how far a token works (docs/decisions/0028-token-scopes.md):
 * selected with the owner and judged by the authentication hook, never in SQL — a precompiled read
 * depends only on its arguments and the stored data (docs/decisions/0012-request-path.md), so
 * "now" and the client address cannot be among them.
 */
const LIMIT_COLUMNS = ['api_tokens.read_only', 'api_tokens.scope_domains', 'api_tokens.acme_challenge', 'api_tokens.expires_at', 'api_tokens.allow_ips'] as const;

/** The token's limits as a read selects them (TokenLimits). */
export interface TokenLimits {
  read_only: 0 | 1;
  scope_domains: string | null;
  acme_challenge: 0 | 1;
  expires_at: string | null;
  allow_ips: string | null;
}

/**
 * The owner of the active token with this hash, as a derived table `owner` (`customer_id`,
 * `is_reseller`, `contact_id`, `token_id` and the token's limits; no row when the token is unknown or revoked, or its contact is
 * deleted). A hot read joins its rows to it, so one statement both checks the token and reads in
 * its owner's scope (src/auth/plugin.ts TokenRead, docs/decisions/0012-request-path.md):
 * `db.selectFrom(tokenOwner(db, hash)).leftJoin('domains', (j) => j.on(visibleToOwner('owner', 'domains.customer_id')))`.
 */
export function tokenOwner(db: Kysely<Database>, hash: string) {
  return activeTokens(db)
    .select(['customers.id as customer_id', 'customers.is_reseller', 'contacts.id as contact_id', 'api_tokens.id as token_id', ...LIMIT_COLUMNS])
    .where('api_tokens.token_hash', '=', hash)
    .as('owner');
}

/** The owner's columns as a read with the token selects them (OwnerColumns). */
export const OWNER_COLUMNS = [
  'owner.customer_id as owner_customer_id',
  'owner.is_reseller as owner_is_reseller',
  'owner.contact_id as owner_contact_id',
  'owner.token_id as owner_token_id',
  'owner.read_only as owner_read_only',
  'owner.scope_domains as owner_scope_domains',
  'owner.acme_challenge as owner_acme_challenge',
  'owner.expires_at as owner_expires_at',
  'owner.allow_ips as owner_allow_ips',
] as const;

/** A row of a read with the token: the owner's columns beside the resource's (null where the owner sees nothing). */
export interface OwnerColumns {
  owner_customer_id: number;
  owner_is_reseller: 0 | 1;
  owner_contact_id: number;
  owner_token_id: number;
  owner_read_only: 0 | 1;
  owner_scope_domains: string | null;
  owner_acme_challenge: 0 | 1;
  owner_expires_at: string | null;
  owner_allow_ips: string | null;
}

/**
 * Tokens that authenticate: not revoked, of a contact (and customer) that still exists (API guide
 * "Authentication").
 */
function activeTokens(db: Kysely<Database>) {
  return db
    .selectFrom('api_tokens')
    .innerJoin('contacts', 'contacts.id', 'api_tokens.contact_id')
    .innerJoin('customers', 'customers.id', 'contacts.customer_id')
    .where('api_tokens.revoked_at', 'is', null);
}

/** A panel session with its contact, as the authentication hook reads it (API guide "Panel sessions (extension)"). */
export interface SessionOwner {
  sessionId: number;
  last_used_at: string;
  expires_at: string;
  idle_timeout_s: number;
  contactId: number;
  name: string;
  email: string;
  customerId: number;
  is_reseller: 0 | 1;
  is_login_disabled: 0 | 1;
  /** null: no TOTP row. */
  totp_enabled: 0 | 1 | null;
}

export class AuthRepository {
  // Runs on every request that has no read with the token: compiled once (src/db/precompiled.ts).
  private readonly byTokenHash;
  private readonly bySessionHash;

  constructor(private readonly db: Kysely<Database>) {
    this.byTokenHash = precompiled(db, (hash: string) =>
      activeTokens(db)
        .select(['customers.id as customerId', 'customers.is_reseller', 'contacts.id as contactId', 'api_tokens.id as tokenId', ...LIMIT_COLUMNS])
        .where('api_tokens.token_hash', '=', hash),
    );
    this.bySessionHash = precompiled(db, (hash: string) =>
      db
        .selectFrom('panel_sessions')
        .innerJoin('contacts', 'contacts.id', 'panel_sessions.contact_id')
        .innerJoin('customers', 'customers.id', 'contacts.customer_id')
        .leftJoin('contact_totp', 'contact_totp.contact_id', 'contacts.id')
        .select([
          'panel_sessions.id as sessionId', 'panel_sessions.last_used_at', 'panel_sessions.expires_at', 'panel_sessions.idle_timeout_s',
          'contacts.id as contactId', 'contacts.name', 'contacts.email', 'customers.id as customerId', 'customers.is_reseller', 'customers.is_login_disabled',
          'contact_totp.enabled as totp_enabled',
        ])
        .where('panel_sessions.session_hash', '=', hash),
    );
  }

  /** The panel session whose cookie has this hash, with its contact (ended or not: the caller judges the times). */
  sessionOwner(hash: string): Promise<SessionOwner | undefined> {
    return this.bySessionHash.first(hash) as Promise<SessionOwner | undefined>;
  }

  /** Notes a session's use at `now` unless that was noted after `since` (at most once a minute, as for tokens). */
  async touchSession(sessionId: number, now: string, since: string): Promise<void> {
    await this.db.updateTable('panel_sessions').set({ last_used_at: now }).where('id', '=', sessionId).where('last_used_at', '<', since).execute();
  }

  /** The active token with this hash, with its contact and customer. */
  tokenOwner(hash: string) {
    return this.byTokenHash.first(hash);
  }

  /**
   * Notes that the token was used at `now`, unless that was noted after `since` already (the
   * authentication hook calls it at most once a minute per token and process).
   */
  async touch(tokenId: number, now: string, since: string): Promise<void> {
    await this.db
      .updateTable('api_tokens')
      .set({ last_used_at: now })
      .where('id', '=', tokenId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
      .execute();
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
