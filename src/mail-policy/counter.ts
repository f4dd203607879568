// How many recipients each mailbox sent to in the last hour (docs/decisions/0020-outbound-limits.md),
// in memory: a sliding window of one-second slots per mailbox, plus the recipients of messages still
// in their SMTP dialogue (counted at RCPT, settled at the end of the message). A restart forgets it.

const SLOT_MS = 1000;

interface Slot {
  at: number;
  n: number;
}

interface Sent {
  slots: Slot[];
  total: number;
}

/** The message in the dialogue of one policy connection (Postfix sends one message's requests at a time on it). */
interface Open {
  instance: string;
  user: string;
  pending: number;
}

export class RecipientCounter {
  private readonly sent = new Map<string, Sent>();
  private readonly pendingOf = new Map<string, number>();
  private readonly open = new Map<string, Open>();

  constructor(
    readonly windowMs = 3_600_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Recipients of `user` in the window: sent ones and those of messages in their dialogue. */
  count(user: string): number {
    return this.committed(user) + (this.pendingOf.get(user) ?? 0);
  }

  /**
   * One more recipient of the message `instance` on connection `conn`, if `user` stays within
   * `limit`: true when counted; false (nothing counted) when it would pass the limit.
   */
  tryRecipient(conn: string, instance: string, user: string, limit: number): boolean {
    const open = this.message(conn, instance, user);
    if (this.count(user) + 1 > limit) return false;
    open.pending++;
    this.pendingOf.set(user, (this.pendingOf.get(user) ?? 0) + 1);
    return true;
  }

  /** The message ended with `recipients` accepted (Postfix's recipient_count): they count as sent now. */
  commit(conn: string, user: string, recipients: number): void {
    this.settle(conn);
    if (recipients <= 0) return;
    const at = Math.floor(this.now() / SLOT_MS) * SLOT_MS;
    const s = this.sent.get(user) ?? { slots: [], total: 0 };
    const last = s.slots.at(-1);
    if (last?.at === at) last.n += recipients;
    else s.slots.push({ at, n: recipients });
    s.total += recipients;
    this.sent.set(user, s);
  }

  /** Forgets the mailboxes whose recipients all left the window (call it now and then: memory). */
  sweep(): void {
    for (const user of [...this.sent.keys()]) this.committed(user);
  }

  /** The connection closed: its message in the dialogue is abandoned (Postfix retries it or the client does). */
  closed(conn: string): void {
    this.settle(conn);
  }

  /** The message open on `conn`; a new instance means the one before it ended or was abandoned. */
  private message(conn: string, instance: string, user: string): Open {
    const open = this.open.get(conn);
    if (open && open.instance === instance && open.user === user) return open;
    this.settle(conn);
    const fresh = { instance, user, pending: 0 };
    this.open.set(conn, fresh);
    return fresh;
  }

  private settle(conn: string): void {
    const open = this.open.get(conn);
    if (!open) return;
    this.open.delete(conn);
    const left = (this.pendingOf.get(open.user) ?? 0) - open.pending;
    if (left > 0) this.pendingOf.set(open.user, left);
    else this.pendingOf.delete(open.user);
  }

  private committed(user: string): number {
    const s = this.sent.get(user);
    if (!s) return 0;
    // A slot leaves when its whole second has: the limit holds in every window, never a second less.
    const since = this.now() - this.windowMs;
    let drop = 0;
    while (drop < s.slots.length && s.slots[drop].at + SLOT_MS <= since) s.total -= s.slots[drop++].n;
    if (drop) s.slots.splice(0, drop);
    if (!s.slots.length) this.sent.delete(user);
    return s.total;
  }
}
