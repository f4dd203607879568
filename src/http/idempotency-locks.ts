// PostgreSQL: idempotency keys in flight as session advisory locks (docs/decisions/0026-safe-retries.md
// "PostgreSQL: the key in flight is a session lock"). A lock is taken by one statement and released
// by another, so both must run on one session: each instance keeps a few connections of its own for
// them, and a key always goes to the same one (by a hash of the key), so its lock and its release
// meet. A connection that breaks frees its locks on the server (its keys are free to other
// instances); it is opened again on the next key.
import type { FastifyBaseLogger } from 'fastify';
import type { Session, Store } from '../db/index.js';
import type { IdempotencyRepository, LockedKey, TokenLockRow } from './idempotency.repository.js';

/** Key-lock connections per instance: statements on one connection wait for each other. */
const SESSIONS = 4;

/** `scope\nkey`, as the lock's name has it. */
export const lockName = (k: { scope: string; key: string }) => `${k.scope}\n${k.key}`;

export class KeyLocks {
  private readonly sessions: (Promise<Session> | undefined)[] = [];

  constructor(
    private readonly store: Store,
    private readonly repo: IdempotencyRepository,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Checks the token and takes the lock of `key` in its scope (`token:<id>`), one statement; no row: the token does not authenticate. */
  async withToken(hash: string, key: string): Promise<TokenLockRow[]> {
    return (await (await this.session(key)).query(this.repo.tokenLockStatement(hash, key))) as unknown as TokenLockRow[];
  }

  /** Takes the lock of the key, then reads it as stored. */
  async claim(scope: string, key: string): Promise<LockedKey> {
    const [row] = await (await this.session(key)).query(this.repo.scopeLockStatement(scope, key));
    return row as unknown as LockedKey;
  }

  /** Releases these keys' locks (taken by this process); a failure is logged (the connection broke: they are free anyway). */
  async release(keys: readonly { scope: string; key: string }[]): Promise<void> {
    const bySession = new Map<number, string[]>();
    for (const k of keys) {
      const i = slot(k.key);
      bySession.set(i, [...(bySession.get(i) ?? []), lockName(k)]);
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

  async close(): Promise<void> {
    const open = this.sessions.splice(0);
    await Promise.all(open.map((s) => s?.then((c) => c.close(), () => {})));
  }

  private session(key: string): Promise<Session> {
    return this.open(slot(key));
  }

  private open(i: number): Promise<Session> {
    let s = this.sessions[i];
    if (!s) {
      const lost = (err: Error) => {
        if (this.sessions[i] === s) this.sessions[i] = undefined;
        this.log.warn({ err }, 'a connection holding idempotency key locks broke: its keys are free to other instances now');
      };
      s = this.store.session!(`idempotency key locks ${i}`, lost);
      this.sessions[i] = s;
      s.catch(() => {
        if (this.sessions[i] === s) this.sessions[i] = undefined;
      });
    }
    return s;
  }
}

/** The connection of a key: the same for every request with it. */
function slot(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return Math.abs(h) % SESSIONS;
}
