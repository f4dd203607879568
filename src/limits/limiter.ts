// Request-rate limits and error blocking (API guide "Rate limits and blocking", "Errors"). A
// sliding log of accepted requests per client: never more than `max` accepted in any window of
// `windowMs`. Rejected requests do not count, so a client that keeps hammering is admitted again as
// soon as its oldest accepted request leaves the window.

export interface LimitSettings {
  rateLimit: { max: number; windowMs: number };
  errorBlock: { max: number; windowMs: number; durationMs: number };
}

export interface Decision {
  allowed: boolean;
  /** true when the client is blocked for causing too many errors. */
  blocked: boolean;
  limit: number;
  remaining: number;
  /** ms until the next slot frees (RateLimit-Reset) or until the block ends. */
  resetMs: number;
}

export interface Limiter {
  hit(client: string): Promise<Decision>;
  recordError(client: string): Promise<void>;
  close(): Promise<void>;
  /** Shared limiters call `listener` each time a decision falls back to in-process state. */
  onFallback?(listener: (err: Error) => void): void;
}

/** In-process limiter: exact for one instance; the fallback when the shared store is down. */
export class MemoryLimiter implements Limiter {
  private readonly accepted = new Map<string, TimeLog>();
  private readonly errors = new Map<string, TimeLog>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly s: LimitSettings, private readonly now: () => number = Date.now) {
    // Forget idle clients so memory stays bounded by the clients of the last window.
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(s.rateLimit.windowMs, 60_000)));
    this.sweeper.unref();
  }

  async hit(client: string): Promise<Decision> {
    const now = this.now();
    const { max, windowMs } = this.s.rateLimit;
    const until = this.blockedUntil.get(client);
    if (until !== undefined) {
      if (until > now) return { allowed: false, blocked: true, limit: max, remaining: 0, resetMs: until - now };
      this.blockedUntil.delete(client);
    }
    let log = this.accepted.get(client);
    if (!log) this.accepted.set(client, (log = new TimeLog()));
    log.prune(now - windowMs);
    if (log.size >= max) return { allowed: false, blocked: false, limit: max, remaining: 0, resetMs: log.oldest + windowMs - now };
    log.push(now);
    return { allowed: true, blocked: false, limit: max, remaining: max - log.size, resetMs: log.oldest + windowMs - now };
  }

  async recordError(client: string): Promise<void> {
    const now = this.now();
    const { max, windowMs, durationMs } = this.s.errorBlock;
    let log = this.errors.get(client);
    if (!log) this.errors.set(client, (log = new TimeLog()));
    log.prune(now - windowMs);
    log.push(now);
    if (log.size >= max) {
      this.blockedUntil.set(client, now + durationMs);
      this.errors.delete(client);
    }
  }

  private sweep() {
    const now = this.now();
    for (const [k, log] of this.accepted) if (log.idleSince(now - this.s.rateLimit.windowMs)) this.accepted.delete(k);
    for (const [k, log] of this.errors) if (log.idleSince(now - this.s.errorBlock.windowMs)) this.errors.delete(k);
    for (const [k, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(k);
  }

  async close() {
    clearInterval(this.sweeper);
  }
}

/**
 * Ascending timestamps with a moving start: dropping expired entries is amortised O(1), so a
 * client with a huge budget (thousands of entries in the window) costs no more per request than
 * one with a small budget.
 */
class TimeLog {
  private ts: number[] = [];
  private head = 0;
  get size() {
    return this.ts.length - this.head;
  }
  get oldest() {
    return this.ts[this.head];
  }
  push(t: number) {
    this.ts.push(t);
  }
  prune(cutoff: number) {
    while (this.head < this.ts.length && this.ts[this.head] <= cutoff) this.head++;
    // Compact once the dead prefix outweighs the live part.
    if (this.head > 64 && this.head * 2 > this.ts.length) {
      this.ts = this.ts.slice(this.head);
      this.head = 0;
    }
  }
  idleSince(cutoff: number) {
    return this.size === 0 || this.ts[this.ts.length - 1] <= cutoff;
  }
}

/**
 * The key a client is limited by: its address, with IPv6 clients grouped by /64 (one host
 * usually owns a whole /64) and IPv4-mapped IPv6 addresses as plain IPv4.
 */
export function clientKey(ip: string): string {
  if (/^::ffff:/i.test(ip) && ip.includes('.')) return ip.slice(7);
  if (!ip.includes(':')) return ip;
  const [head, tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':') + '::/64';
}
