// PostgreSQL: idempotency keys in flight as session advisory locks (docs/decisions/0026-safe-retries.md
// "PostgreSQL: the key in flight is a session lock"). A lock is taken by one statement and released
// by another, so both must run on one session: each instance keeps a few connections of its own for
// them. A key goes to the least busy one (the first when all are idle, so at low load one
// connection stays warm) and stays there while this process has a statement or a lock for it, so
// its lock and its release meet, and a second request with it here takes the same lock again
// (session locks count). A connection that breaks frees its locks on the server (its keys are
// free to other instances); it is opened again on the next key.
//
// The statement that takes a lock reads the key with its own snapshot, taken just before the lock.
// An answer another instance stored and then released in between would be missed, and the write
// run twice. It cannot be: a lock whose answer was stored is released RELEASE_AFTER_MS after that
// commit, and a statement on these connections may run at most STATEMENT_TIMEOUT (less), so no
// statement's snapshot can be older than the commit while its lock comes after the release. (A
// repeat meanwhile finds the lock held and the answer stored: it replays it.)
import type { FastifyBaseLogger } from 'fastify';
import type { Session, Store } from '../db/index.js';
import type { IdempotencyRepository, LockedKey, TokenLockRow } from './idempotency.repository.js';
import { keyName } from './idempotency-key.js';

/** Key-lock connections per instance: statements on one connection wait for each other. */
const SESSIONS = 4;
/** How long a statement on a key-lock connection may run (the server cancels it after). */
const STATEMENT_TIMEOUT = '1s';
/** How long after its answer was stored a key's lock is released: longer than STATEMENT_TIMEOUT. */
export const RELEASE_AFTER_MS = 2_000;

export class KeyLocks {
  private readonly sessions: (Promise<Session> | undefined)[] = [];
  /** Statements running on each connection. */
  private readonly busy: number[] = new Array<number>(SESSIONS).fill(0);
  /** The connection of each key with statements or locks here, and how many of them. */
  private readonly placed = new Map<string, { slot: number; refs: number }>();
  /** Keys whose answer is stored, with when their locks may go (Date.now()), in that order. */
  private answered: { scope: string; key: string; due: number }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly repo: IdempotencyRepository,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Checks the token and takes the lock of `key` in its scope (`token:<id>`), one statement; no row: the token does not authenticate. */
  withToken(hash: string, key: string): Promise<TokenLockRow[]> {
    return this.lockWith(key, this.repo.tokenLockStatement(hash, key)) as Promise<TokenLockRow[]>;
  }

  /** Takes the key's lock and reads the key as stored, one statement. */
  async claim(scope: string, key: string): Promise<LockedKey> {
    return (await this.lockWith(key, this.repo.scopeLockStatement(scope, key)))[0];
  }

  /** Runs a statement that tries the lock of `key` (its rows' `locked`) on the key's connection; a lock taken stays counted there. */
  private async lockWith(key: string, statement: { name: string; text: string; values: unknown[] }): Promise<LockedKey[]> {
    const at = this.place(key);
    this.busy[at.slot]++;
    let rows: LockedKey[] = [];
    try {
      rows = (await (await this.open(at.slot)).query(statement)) as unknown as LockedKey[];
      return rows;
    } finally {
      this.busy[at.slot]--;
      // The statement's ref stays as the lock's when it took one (no row: the token did not authenticate).
      if (!rows[0]?.locked) this.unplace(key);
    }
  }

  /** The key's connection: where it is already, else the least busy (the first of equals); one more ref. */
  private place(key: string): { slot: number; refs: number } {
    let at = this.placed.get(key);
    if (!at) {
      let slot = 0;
      for (let i = 1; i < SESSIONS; i++) if (this.busy[i] < this.busy[slot]) slot = i;
      this.placed.set(key, (at = { slot, refs: 0 }));
    }
    at.refs++;
    return at;
  }

  private unplace(key: string): void {
    const at = this.placed.get(key);
    if (at && --at.refs <= 0) this.placed.delete(key);
  }

  /**
   * Releases these keys' locks (taken by this process): at once, or with `answered` (their answers
   * are stored) RELEASE_AFTER_MS from now, together with the others then due. A failure is logged
   * (the connection broke: they are free anyway).
   */
  release(keys: readonly { scope: string; key: string }[], o: { answered?: boolean } = {}): void {
    if (!o.answered) return void this.unlock(keys);
    const due = Date.now() + RELEASE_AFTER_MS;
    for (const k of keys) this.answered.push({ scope: k.scope, key: k.key, due });
    this.timer ??= setTimeout(() => this.releaseDue(), RELEASE_AFTER_MS).unref();
  }

  private releaseDue(): void {
    this.timer = null;
    const now = Date.now();
    const cut = this.answered.findIndex((k) => k.due > now);
    const due = cut < 0 ? this.answered.splice(0) : this.answered.splice(0, cut);
    void this.unlock(due);
    if (this.answered.length) this.timer = setTimeout(() => this.releaseDue(), this.answered[0].due - now).unref();
  }

  private async unlock(keys: readonly { scope: string; key: string }[]): Promise<void> {
    const bySession = new Map<number, string[]>();
    for (const k of keys) {
      const at = this.placed.get(k.key);
      if (!at) continue; // not locked here (cannot be: each release follows a lock taken)
      this.unplace(k.key);
      const names = bySession.get(at.slot);
      if (names) names.push(keyName(k));
      else bySession.set(at.slot, [keyName(k)]);
    }
    await Promise.all(
      [...bySession].map(async ([i, names]) => {
        try {
          await (await this.open(i)).query(this.repo.unlockStatement(names));
        } catch (err) {
          this.log.warn({ err }, 'releasing idempotency key locks failed');
        }
      }),
    );
  }

  /** Closes the connections, which frees every lock they hold. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.answered = [];
    this.placed.clear();
    const open = this.sessions.splice(0);
    await Promise.all(open.map((s) => s?.then((c) => c.close(), () => {})));
  }

  private open(i: number): Promise<Session> {
    let s = this.sessions[i];
    if (!s) {
      const lost = (err: Error) => {
        if (this.sessions[i] === s) this.sessions[i] = undefined;
        this.log.warn({ err }, 'a connection holding idempotency key locks broke: its keys are free to other instances now');
      };
      s = this.store.session!(`idempotency key locks ${i}`, lost, `set statement_timeout = '${STATEMENT_TIMEOUT}'`);
      this.sessions[i] = s;
      s.catch(() => {
        if (this.sessions[i] === s) this.sessions[i] = undefined;
      });
    }
    return s;
  }
}
