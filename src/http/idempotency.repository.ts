// All SQL of idempotency keys (migration 017; API guide "Safe retries"). Times are ISO strings of
// the caller's clock (src/db/time.ts), compared as text like every timestamp of the store.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { commitUnflushed } from '../db/dialect.js';
import { precompiledWrite } from '../db/precompiled.js';

/** A key and the request that holds it. */
export interface KeyClaim {
  scope: string;
  key: string;
  /** Random per request: only the holder stores its answer or frees the key. */
  claim: string;
}

/** What a key holds: the first request's fingerprint and, once it answered, its answer. */
export interface KeyRecord {
  fingerprint: string;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/** A stored answer. */
export interface KeyAnswer {
  status: number;
  /** JSON object of header name → value. */
  headers: string;
  body: string | null;
}

export class IdempotencyRepository {
  // Built once per repository (src/db/precompiled.ts): building the claim's ON CONFLICT costs more than running it.
  private readonly claimKey;
  private readonly answerKey;

  constructor(private readonly db: Kysely<Database>) {
    this.claimKey = precompiledWrite(db, (scope: string, key: string, fingerprint: string, claim: string, now: string, expiresAt: string, abandonedBefore: string) =>
      db
        .insertInto('idempotency_keys')
        .values({ scope, idempotency_key: key, fingerprint, claim, status: null, headers: null, body: null, created_at: now, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['scope', 'idempotency_key'])
            .doUpdateSet((eb) => ({
              fingerprint: eb.ref('excluded.fingerprint'),
              claim: eb.ref('excluded.claim'),
              status: null,
              headers: null,
              body: null,
              created_at: eb.ref('excluded.created_at'),
              expires_at: eb.ref('excluded.expires_at'),
            }))
            .where((eb) =>
              eb.or([
                eb('idempotency_keys.expires_at', '<=', now),
                eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<=', abandonedBefore)]),
              ]),
            ),
        )
        // Unflushed: the write it guards commits after it, synchronously, which flushes it too.
        .returning(['claim', commitUnflushed(db).as('unflushed')]),
    );
    // Unflushed (docs/decisions/0026): lost only if PostgreSQL itself crashes within a second; the
    // key then counts as abandoned, as after an instance that died before storing its answer.
    this.answerKey = precompiledWrite(db, (status: number, headers: string, body: string | null, scope: string, key: string, claim: string) =>
      db
        .updateTable('idempotency_keys')
        .set({ status, headers, body })
        .where('scope', '=', scope)
        .where('idempotency_key', '=', key)
        .where('claim', '=', claim)
        .returning(commitUnflushed(db).as('unflushed')),
    );
  }

  /**
   * Takes the key for a request, in one statement: a key nobody used, one past `expires_at`, or
   * one whose first request never answered and was taken before `abandonedBefore`. False when
   * another request holds it or has answered it (read that with `find`).
   */
  async claim(c: KeyClaim & { fingerprint: string }, at: { now: string; expiresAt: string; abandonedBefore: string }): Promise<boolean> {
    return (await this.claimKey.all(c.scope, c.key, c.fingerprint, c.claim, at.now, at.expiresAt, at.abandonedBefore)).length > 0;
  }

  find(scope: string, key: string): Promise<KeyRecord | undefined> {
    return this.db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'status', 'headers', 'body'])
      .where('scope', '=', scope)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
  }

  /** Stores the answer, if `c.claim` still holds the key (false: it was taken for abandoned meanwhile). */
  async answer(c: KeyClaim, a: KeyAnswer): Promise<boolean> {
    // A body may be null: the placeholder stands for it all the same (a parameter, never inlined).
    return (await this.answerKey.all(a.status, a.headers, a.body, c.scope, c.key, c.claim)).length > 0;
  }

  /** Frees the key (its request failed with a 5xx): the next request with it runs anew. */
  async release(c: KeyClaim): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('scope', '=', c.scope).where('idempotency_key', '=', c.key).where('claim', '=', c.claim).execute();
  }

  /** Deletes the keys past their expiry; answers how many. */
  async purge(now: string): Promise<number> {
    const r = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
