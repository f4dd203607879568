// Idempotency-Key on the API's writes (API guide "Safe retries"; docs/decisions/0026-safe-retries.md):
// after authentication the key is claimed, and the first answer is stored as it is sent (in a batch
// written within 50 ms, src/db/write-batches.ts); a repeat gets exactly it — from any instance, after
// a restart — without the write running again. A repeat with another request answers 422, one while
// the first still runs 409. On PostgreSQL (several instances) the key is claimed in the store, in
// one statement; on SQLite (one API process, operator guide "SQLite") it is held in the process and
// stored with its answer, which spares every such write a commit of its own.
// A request without the header costs one header lookup, no statement.
import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { isPostgres } from '../db/dialect.js';
import type { Store } from '../db/index.js';
import { FLUSH_MS, WriteBatches } from '../db/write-batches.js';
import { AppError } from '../errors.js';
import { originForm } from '../jsonapi/document.js';
import { keyScope, parseIdempotencyKey, requestFingerprint, tokenKeyScope } from './idempotency-key.js';
import { IdempotencyRepository, PENDING_FINGERPRINT, type KeyAnswer, type KeyClaim, type KeyRecord, type TokenClaimRow } from './idempotency.repository.js';
import type { TokenRead } from '../auth/plugin.js';

/** A key this request holds, and the fingerprint its answer is stored with. */
interface Claim extends KeyClaim {
  fingerprint: string;
}

/** A key this process holds until its answer is stored (SQLite). */
interface HeldClaim extends Claim {
  /** Date.now() when it was taken. */
  at: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request holds, whose answer onSend stores; null without one (or on a replay). */
    idempotencyClaim: Claim | HeldClaim | null;
  }
}

/**
 * A first request that has not answered after this long is taken for abandoned (its instance died):
 * a repeat then runs anew. Longer than any request runs (a PATCH waits at most 15 s).
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

interface Keyed {
  scope: string;
  key: string;
  fingerprint: string;
}

type Kept = Claim & KeyAnswer & { held?: HeldClaim };

/** The hooks a write route gets (src/http/safe-retries.ts): `preValidation` claims or replays, `onSend` stores. */
export function idempotencyHooks(store: Store, o: { ttlMs: number; abandonedAfterMs?: number }) {
  const repo = new IdempotencyRepository(store.db);
  const abandonedAfterMs = o.abandonedAfterMs ?? ABANDONED_AFTER_MS;
  const inProcess = !isPostgres(store.db);
  /** SQLite: the keys whose first request runs or whose answer waits for its batch, by `scope\nkey`. */
  const held = new Map<string, HeldClaim>();
  const heldId = (k: { scope: string; key: string }) => `${k.scope}\n${k.key}`;

  /** Claims the key for `request`; answers what it holds when a first request has answered it. */
  async function claimOrFind(request: FastifyRequest, raw: string): Promise<KeyRecord | null> {
    const key = parseIdempotencyKey(raw);
    if (key === null) throw malformed();
    const k = { scope: keyScope(request.actor!), key, fingerprint: requestFingerprint(request.method, originForm(request.url), request.body) };
    return inProcess ? holdOrFind(request, k) : claimInStore(request, k);
  }

  async function claimInStore(request: FastifyRequest, k: Keyed): Promise<KeyRecord | null> {
    const { scope, key, fingerprint } = k;
    // A key freed or purged between the claim and the read is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim: KeyClaim = { scope, key, claim: crypto.randomUUID() };
      const now = Date.now();
      const at = { now: new Date(now).toISOString(), expiresAt: new Date(now + o.ttlMs).toISOString(), abandonedBefore: new Date(now - abandonedAfterMs).toISOString() };
      if (await repo.claim({ ...claim, fingerprint }, at)) {
        request.idempotencyClaim = { ...claim, fingerprint };
        return null;
      }
      const found = await answerOf(await repo.find(scope, key), k);
      if (found) return found;
    }
    throw inUse();
  }

  /**
   * What a request whose claim was refused answers with the key as stored: its answer, or 422/409;
   * undefined when the key is gone meanwhile (freed or purged: claim again).
   */
  async function answerOf(stored: KeyRecord | undefined, k: Keyed): Promise<KeyRecord | undefined> {
    let found = stored;
    // The same request, or one claimed before its body was read, not answered yet: its answer may be on its way to the store.
    if (found?.status === null && (found.fingerprint === k.fingerprint || found.fingerprint === PENDING_FINGERPRINT)) found = await answeredSoon(k.scope, k.key);
    if (!found) return undefined;
    if (found.status === null && (found.fingerprint === PENDING_FINGERPRINT || found.fingerprint === k.fingerprint)) throw inUse();
    if (found.fingerprint !== k.fingerprint) throw reused();
    return found;
  }

  /**
   * PostgreSQL: the write routes' TokenRead (src/auth/plugin.ts) — a request with an API token and
   * a key claims the key in the statement that checks its token, so a key costs no round trip of
   * its own (docs/decisions/0026-safe-retries.md). The fingerprint follows with the answer.
   */
  const tokenClaim: TokenRead | undefined = inProcess
    ? undefined
    : {
        key: 'owner_token_id',
        args(request) {
          const raw = request.headers['idempotency-key'];
          const key = raw === undefined ? null : parseIdempotencyKey(String(raw));
          if (key === null) return null;
          const now = Date.now();
          return [key, crypto.randomUUID(), new Date(now).toISOString(), new Date(now + o.ttlMs).toISOString(), new Date(now - abandonedAfterMs).toISOString()];
        },
        run: (hash, key, claim, now, expiresAt, abandonedBefore) =>
          repo.claimWithToken(hash, { key: key as string, claim: claim as string }, { now: now as string, expiresAt: expiresAt as string, abandonedBefore: abandonedBefore as string }),
      };

  /** The claim tokenClaim made for `request`, if it made one and preValidation has not taken it over. */
  function tokenClaimOf(request: FastifyRequest): { row: TokenClaimRow; key: string; claim: string } | null {
    const r = request.tokenReadResult;
    if (!tokenClaim || !r || request.routeOptions.config?.tokenRead !== tokenClaim) return null;
    return { row: r.rows[0] as TokenClaimRow, key: r.args[0] as string, claim: r.args[1] as string };
  }

  /** preValidation after tokenClaim: holds the key it claimed, or answers what the key as stored says. */
  async function adoptTokenClaim(request: FastifyRequest, made: { row: TokenClaimRow; key: string; claim: string }): Promise<KeyRecord | null> {
    request.tokenReadResult = null;
    const k = { scope: keyScope(request.actor!), key: made.key, fingerprint: requestFingerprint(request.method, originForm(request.url), request.body) };
    if (made.row.claimed === made.claim) {
      request.idempotencyClaim = { scope: k.scope, key: k.key, claim: made.claim, fingerprint: k.fingerprint };
      return null;
    }
    // Taken (a repeat, or another request with the key): what it holds; gone meanwhile: claimed again.
    return (await answerOf(await repo.find(k.scope, k.key), k)) ?? claimInStore(request, k);
  }

  /** SQLite: holds the key in the process (taken before the first await, so two requests never both take it), or answers what the store has. */
  async function holdOrFind(request: FastifyRequest, k: Keyed): Promise<KeyRecord | null> {
    const id = heldId(k);
    let holder = held.get(id);
    // Its answer may be waiting for its batch: written now, the key is free in the process again.
    if (holder && holder.fingerprint === k.fingerprint) {
      await answers.settled();
      holder = held.get(id);
    }
    if (holder && Date.now() - holder.at < abandonedAfterMs) throw holder.fingerprint === k.fingerprint ? inUse() : reused();
    const claim: HeldClaim = { ...k, claim: crypto.randomUUID(), at: Date.now() };
    held.set(id, claim);
    try {
      const found = await repo.find(k.scope, k.key);
      // Rows are stored with their answers here; one without (claimed by an older version) counts once abandoned.
      if (found && found.expires_at > new Date().toISOString() && (found.status !== null || found.created_at > new Date(Date.now() - abandonedAfterMs).toISOString())) {
        if (found.fingerprint !== k.fingerprint) throw reused();
        if (found.status === null) throw inUse();
        held.delete(id);
        return found;
      }
    } catch (err) {
      held.delete(id);
      throw err;
    }
    request.idempotencyClaim = claim;
    return null;
  }

  // The answers, written in batches after they went out (src/db/write-batches.ts): a claim that no
  // longer holds its key was taken for abandoned meanwhile; a refused batch leaves its keys to be
  // taken for abandoned later (PostgreSQL) or free (SQLite), as after an instance that died before storing them.
  const answers = new WriteBatches<{ answer: Kept; log: FastifyBaseLogger }>(
    async (batch) => {
      try {
        const kept = batch.map((b) => b.answer);
        const lost = new Set((await (inProcess ? repo.stored(kept.map(storedRow)) : repo.answer(kept, { now: new Date().toISOString(), expiresAt: new Date(Date.now() + o.ttlMs).toISOString() }))).map((c) => c.claim));
        for (const b of batch) {
          if (lost.has(b.answer.claim)) b.log.warn({ scope: b.answer.scope }, 'idempotency key was taken over before its first request answered; that answer is not kept');
        }
      } finally {
        for (const b of batch) release(b.answer.held);
      }
    },
    (batch, err) => {
      for (const b of batch) b.log.warn({ err, scope: b.answer.scope }, 'storing the answer of an idempotency key failed');
    },
  );
  const storedRow = (a: Kept) => ({ ...a, created_at: new Date(a.held!.at).toISOString(), expires_at: new Date(a.held!.at + o.ttlMs).toISOString() });
  /** Frees a key held in the process, unless another request holds it now. */
  const release = (claim: HeldClaim | undefined) => {
    if (claim && held.get(heldId(claim))?.claim === claim.claim) held.delete(heldId(claim));
  };

  /**
   * The key once a first request that has answered has its answer stored: this instance's batch is
   * written at once, another instance's within FLUSH_MS; a first request still running stays null.
   */
  async function answeredSoon(scope: string, key: string): Promise<KeyRecord | undefined> {
    await answers.settled();
    const found = await repo.find(scope, key);
    if (found?.status !== null) return found;
    await new Promise((resolve) => setTimeout(resolve, 2 * FLUSH_MS));
    return repo.find(scope, key);
  }

  /** Keeps the answer for the key's repeats, or frees the key after a 5xx (the draft lets a client retry then). */
  async function keep(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const claim = request.idempotencyClaim!;
    request.idempotencyClaim = null;
    const mine = 'at' in claim ? claim : undefined;
    const body = payload === undefined || payload === null ? null : typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (reply.statusCode >= 500 || body === undefined) return mine ? release(mine) : repo.release(claim);
    const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([name]) => !NOT_STORED.test(name)));
    answers.add({ answer: { scope: claim.scope, key: claim.key, claim: claim.claim, fingerprint: claim.fingerprint, status: reply.statusCode, headers: JSON.stringify(headers), body, held: mine }, log: request.log });
  }

  return {
    tokenClaim,
    preValidation(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const raw = request.headers['idempotency-key'];
      if (raw === undefined || !request.actor) return done();
      const made = tokenClaimOf(request);
      (made ? adoptTokenClaim(request, made) : claimOrFind(request, String(raw))).then((found) => (found ? replay(request, reply, found) : done()), done);
    },
    onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload: unknown) => void) {
      // A key claimed with the token of a request refused before preValidation (the token's limits, its body): free again.
      const made = tokenClaimOf(request);
      if (made && made.row.claimed === made.claim) {
        request.tokenReadResult = null;
        return void repo.release({ scope: tokenKeyScope(made.row.owner_token_id), key: made.key, claim: made.claim }).then(
          () => done(null, payload),
          (err: unknown) => (request.log.warn({ err }, 'freeing an idempotency key failed'), done(null, payload)),
        );
      }
      if (!request.idempotencyClaim) return done(null, payload);
      // The answer goes out whether or not it could be stored (a repeat then finds the key abandoned later).
      keep(request, reply, payload).then(
        () => done(null, payload),
        (err: unknown) => {
          request.log.warn({ err }, 'freeing an idempotency key failed');
          done(null, payload);
        },
      );
    },
    /** Resolves once every answer kept so far is stored (the app's onClose waits for it). */
    settled: () => answers.settled(),
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
