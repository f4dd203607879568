// Idempotency-Key on the API's writes (API guide "Safe retries"; docs/decisions/0026-safe-retries.md):
// after authentication the key is held, and the first answer is stored with it as it is sent (in a
// batch written within 50 ms, src/db/write-batches.ts); a repeat gets exactly it — from any
// instance, after a restart — without the write running again. A repeat with another request
// answers 422, one while the first still runs 409. A key in flight is held in the process and, on
// PostgreSQL (several instances), also as a session lock that every instance sees
// (src/http/idempotency-locks.ts). With an API token the key is read (and on PostgreSQL locked) in
// the statement that checks the token. A request without the header costs one header lookup, no statement.
import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Store } from '../db/index.js';
import { FLUSH_MS, WriteBatches } from '../db/write-batches.js';
import { AppError } from '../errors.js';
import { originForm } from '../jsonapi/document.js';
import { keyName, keyScope, parseIdempotencyKey, requestText, textFingerprint, tokenKeyScope } from './idempotency-key.js';
import { IdempotencyRepository, type KeyClaim, type KeyRecord, type LockedKey, type TokenLockRow } from './idempotency.repository.js';
import { KeyLocks } from './idempotency-locks.js';
import type { TokenRead } from '../auth/plugin.js';

/** A key this process holds until its answer is stored: of the request that holds it (its text, see Keyed). */
interface HeldClaim extends KeyClaim, Keyed {
  /** Date.now() when it was taken. */
  at: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request holds, whose answer onSend stores; null without one (or on a replay). */
    idempotencyClaim: HeldClaim | null;
  }
}

/**
 * A key held in the process longer than this is taken for abandoned (longer than any request runs:
 * a PATCH waits at most 15 s); so is a row without an answer, which an older version stored for a
 * key in flight.
 */
export const ABANDONED_AFTER_MS = 60_000;

/** Headers that describe the exchange, not the answer: a replay gets its own. */
const NOT_STORED = /^(x-request-id|content-length|date|connection|keep-alive|transfer-encoding|retry-after|ratelimit-.*)$/i;

const inUse = () =>
  new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being answered; repeat it once that one has its answer.', { header: 'Idempotency-Key' });
const reused = () =>
  new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another request (method, path or body); use a new key for a new request.', { header: 'Idempotency-Key' });
const malformed = () =>
  new AppError('invalid_header', 'Idempotency-Key must be 1 to 255 printable ASCII characters: a quoted string ("…") or a token without spaces.', { header: 'Idempotency-Key' });

/**
 * A key as a request sends it. Two requests are the same when their texts are (requestText); the
 * text's hash, which the store keeps, is taken only when needed — to compare with a stored key, and
 * in the batch that stores the answer — not on the way to the answer (fingerprintOf).
 */
interface Keyed {
  scope: string;
  key: string;
  text: string;
  fingerprint?: string;
}

/** A key as read from the store (a row, or a key-lock statement's columns). */
type StoredKey = Pick<LockedKey, 'fingerprint' | 'created_at' | 'expires_at' | 'status'>;

const fingerprintOf = (k: Keyed): string => (k.fingerprint ??= textFingerprint(k.text));

/** An answer waiting for its batch: its headers as the reply had them (what to store of them is chosen in the batch). */
type Kept = HeldClaim & { status: number; headers: ReturnType<FastifyReply['getHeaders']>; body: string | null };

/** The hooks a write route gets (src/http/safe-retries.ts): `preValidation` holds or replays, `onSend` stores. */
export function idempotencyHooks(store: Store, o: { ttlMs: number; log: FastifyBaseLogger; abandonedAfterMs?: number }) {
  const repo = new IdempotencyRepository(store.db);
  const abandonedAfterMs = o.abandonedAfterMs ?? ABANDONED_AFTER_MS;
  const locks = store.session ? new KeyLocks(store, repo, o.log) : null;
  /** The keys whose first request runs here or whose answer waits for its batch, by `scope\nkey`. */
  const held = new Map<string, HeldClaim>();
  /** Batches of answers stored so far (adoptTokenLock says why). */
  let storedBatches = 0;

  /** The key as this request sees it. */
  const keyedOf = (request: FastifyRequest, key: string): Keyed => ({
    scope: keyScope(request.actor!),
    key,
    text: requestText(request.method, originForm(request.url), request.body),
  });

  /**
   * What a key held by this request says as stored: null (run the request), the first answer to
   * replay, or 409/422. A row without an answer is an older version's key in flight.
   */
  function storedAnswer(found: StoredKey | undefined, k: Keyed): KeyRecord | null {
    if (!found?.expires_at || found.expires_at <= new Date().toISOString()) return null;
    if (found.status === null) {
      if (found.created_at! <= new Date(Date.now() - abandonedAfterMs).toISOString()) return null;
      throw inUse();
    }
    if (found.fingerprint !== fingerprintOf(k)) throw reused();
    return found as KeyRecord;
  }

  /** Takes the key in the process for a request; before any `await`, so two requests of this process never both hold it. */
  function take(k: Keyed): HeldClaim {
    const claim: HeldClaim = { ...k, claim: crypto.randomUUID(), at: Date.now() };
    held.set(keyName(k), claim);
    return claim;
  }

  /** What the request holding `claim` does with its key as stored (storedAnswer): runs holding it, or replays or refuses and lets it go. */
  function decide(request: FastifyRequest, claim: HeldClaim, found: StoredKey | undefined): KeyRecord | null {
    try {
      const answer = storedAnswer(found, claim);
      if (answer) release([claim]);
      else request.idempotencyClaim = claim;
      return answer;
    } catch (err) {
      release([claim]);
      throw err;
    }
  }

  /**
   * Holds the key for `request` (in the process; on PostgreSQL also its lock), or answers what it
   * holds when a first request has answered it. `last`: the key's lock is held elsewhere a second time.
   */
  async function holdOrFind(request: FastifyRequest, k: Keyed, last = false): Promise<KeyRecord | null> {
    const id = keyName(k);
    let holder = held.get(id);
    // Its answer may be waiting for its batch: written now, the key is free in the process again.
    if (holder && holder.text === k.text) {
      await answers.settled();
      holder = held.get(id);
    }
    if (holder && Date.now() - holder.at < abandonedAfterMs) throw holder.text === k.text ? inUse() : reused();
    const claim = take(k);
    let found: StoredKey | undefined;
    try {
      const locked = locks ? await locks.claim(k.scope, k.key) : undefined;
      if (locked && !locked.locked) {
        held.delete(id);
        return heldElsewhere(request, k, locked, last);
      }
      found = locked ?? (await repo.find(k.scope, k.key));
    } catch (err) {
      release([claim]);
      throw err;
    }
    return decide(request, claim, found);
  }

  /**
   * PostgreSQL: another instance holds the key's lock. Its answer, if stored; else it runs or its
   * answer is on its way to the store (at most FLUSH_MS): look again once, then 409.
   */
  async function heldElsewhere(request: FastifyRequest, k: Keyed, found: LockedKey, last: boolean): Promise<KeyRecord | null> {
    const answered = found.status === null ? null : storedAnswer(found, k);
    if (answered) return answered;
    if (last) throw inUse();
    await new Promise((resolve) => setTimeout(resolve, 2 * FLUSH_MS));
    return holdOrFind(request, k, true);
  }

  /**
   * The write routes' TokenRead (src/auth/plugin.ts): a request with an API token and a key reads
   * the key (on PostgreSQL: takes its lock) in the statement that checks its token, so a key costs
   * no statement of its own (docs/decisions/0026-safe-retries.md).
   */
  const tokenClaim: TokenRead = {
    key: 'owner_token_id',
    args(request) {
      const raw = request.headers['idempotency-key'];
      const key = raw === undefined ? null : parseIdempotencyKey(String(raw));
      return key === null ? null : [key, storedBatches];
    },
    run: (hash, key) => (locks ? locks.withToken(hash, key as string) : repo.withToken(hash, key as string)),
  };

  /** What tokenClaim read (and locked) for `request`, if it ran and preValidation has not taken it over. */
  function tokenLockOf(request: FastifyRequest): { row: TokenLockRow; key: string; storedBatches: number } | null {
    const r = request.tokenReadResult;
    if (!r || request.routeOptions.config?.tokenRead !== tokenClaim) return null;
    return { row: r.rows[0] as TokenLockRow, key: r.args[0] as string, storedBatches: r.args[1] as number };
  }

  /** preValidation after tokenClaim: holds the key it read (and locked), or answers what the key as stored says. */
  async function adoptTokenLock(request: FastifyRequest, made: { row: TokenLockRow; key: string; storedBatches: number }): Promise<KeyRecord | null> {
    request.tokenReadResult = null;
    const k = keyedOf(request, made.key);
    if (!made.row.locked) return heldElsewhere(request, k, made.row, false);
    // In this process only `held` guards a key (on PostgreSQL a second request's lock on the same
    // session is granted too), and the read may be older than an answer stored since by a request
    // of this process that has let the key go now. So once a batch was stored after the read began
    // (a batch is counted before its keys are let go), decide afresh, reading again; the token
    // statement's lock goes back after.
    if (made.storedBatches !== storedBatches) {
      try {
        return await holdOrFind(request, k);
      } finally {
        locks?.release([k]);
      }
    }
    if (held.has(keyName(k))) {
      // Another request of this process holds it (on PostgreSQL the lock was taken again on the
      // same session: session locks count, give that back): decide as any request here.
      locks?.release([k]);
      return holdOrFind(request, k);
    }
    return decide(request, take(k), made.row);
  }

  // The answers, stored in batches after they went out (src/db/write-batches.ts), then their keys
  // released; while the store cannot take a batch, its keys stay held (a repeat here waits for the
  // batch, holdOrFind; on another instance it answers 409). A key stored and answered meanwhile (its lock was lost: another instance took it over) keeps that
  // answer; a batch refused for good leaves its keys free, as after an instance that died before
  // storing them.
  const answers = new WriteBatches<{ answer: Kept; log: FastifyBaseLogger }>(
    async (batch) => {
      const kept = batch.map((b) => b.answer);
      const lost = new Set((await repo.stored(kept.map(storedRow))).map((c) => c.claim));
      for (const b of batch) {
        if (lost.has(b.answer.claim)) b.log.warn({ scope: b.answer.scope }, 'idempotency key was taken over before its first request answered; that answer is not kept');
      }
      storedBatches++;
      // A stored answer's lock goes later (src/http/idempotency-locks.ts says why); the others' now.
      release(kept.filter((a) => !lost.has(a.claim)), { answered: true });
      release(kept.filter((a) => lost.has(a.claim)));
    },
    (batch, err) => {
      // Counted too: a statement whose answer was lost may have committed (adoptTokenLock reads again).
      storedBatches++;
      for (const b of batch) b.log.warn({ err, scope: b.answer.scope }, 'storing the answer of an idempotency key failed');
      release(batch.map((b) => b.answer));
    },
  );
  const storedRow = (a: Kept) => ({
    scope: a.scope,
    key: a.key,
    claim: a.claim,
    fingerprint: fingerprintOf(a),
    status: a.status,
    headers: JSON.stringify(Object.fromEntries(Object.entries(a.headers).filter(([name]) => !NOT_STORED.test(name)))),
    body: a.body,
    created_at: new Date(a.at).toISOString(),
    expires_at: new Date(a.at + o.ttlMs).toISOString(),
  });
  /** Frees keys held here (those another request holds now aside) and their locks (`answered`: their answers are stored). */
  const release = (claims: readonly HeldClaim[], o: { answered?: boolean } = {}) => {
    const mine = claims.filter((c) => held.get(keyName(c))?.claim === c.claim);
    for (const c of mine) held.delete(keyName(c));
    if (locks && mine.length) locks.release(mine, o);
  };

  /** Keeps the answer for the key's repeats, or frees the key after a 5xx (the draft lets a client retry then). */
  function keep(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const claim = request.idempotencyClaim!;
    request.idempotencyClaim = null;
    const body = payload === undefined || payload === null ? null : typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (reply.statusCode >= 500 || body === undefined) return release([claim]);
    answers.add({ answer: { ...claim, status: reply.statusCode, headers: reply.getHeaders(), body }, log: request.log });
  }

  return {
    tokenClaim,
    preValidation(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const raw = request.headers['idempotency-key'];
      if (raw === undefined || !request.actor) return done();
      const made = tokenLockOf(request);
      const key = made ? made.key : parseIdempotencyKey(String(raw));
      if (key === null) return done(malformed());
      (made ? adoptTokenLock(request, made) : holdOrFind(request, keyedOf(request, key))).then((found) => (found ? replay(request, reply, found) : done()), done);
    },
    onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload: unknown) => void) {
      // A key locked with the token of a request refused before preValidation (the token's limits, its body): free again.
      const made = tokenLockOf(request);
      if (made) {
        request.tokenReadResult = null;
        if (made.row.locked) locks?.release([{ scope: tokenKeyScope(made.row.owner_token_id), key: made.key }]);
      }
      if (request.idempotencyClaim) keep(request, reply, payload);
      done(null, payload);
    },
    /** Resolves once every answer kept so far is stored (the app's onClose waits for it). */
    settled: () => answers.settled(),
    /** Stores what waits and closes the key-lock connections. */
    async close() {
      await answers.settled();
      await locks?.close();
    },
  };
}

/** Sends the stored answer as it was: status, headers, body (the negotiation's onSend sets the content type). */
function replay(request: FastifyRequest, reply: FastifyReply, found: KeyRecord): void {
  const headers = JSON.parse(found.headers ?? '{}') as Record<string, string | string[] | number>;
  // No handler runs, so src/resources/accepted.ts does not note the job: the audit trail takes it
  // from the stored 202's Content-Location (API guide "Audit events").
  request.queueJobId = jobNamedBy(headers['content-location']);
  reply.code(found.status!);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  reply.send(found.body ?? undefined);
}

/** The job a stored 202 names: its Content-Location is `<base>/queue-jobs/<id>` (src/resources/accepted.ts); else null. */
function jobNamedBy(contentLocation: unknown): number | null {
  const m = typeof contentLocation === 'string' ? /\/queue-jobs\/([0-9]+)$/.exec(contentLocation) : null;
  return m ? Number(m[1]) : null;
}
