// The shared limiter for several instances (REDIS_URL). Each decision is one atomic Lua script on
// the Redis clock, so instances with skewed clocks still share one exact window.
//
// Redis down (decided behaviour, docs/decisions/0002-rate-limiting.md): every instance falls back
// to its own in-memory limiter, so each instance still enforces the limit and no request fails
// with a driver error; a warning is logged and hostplane_rate_limit_fallback_total counts it.
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryLimiter, type Decision, type LimitSettings, type Limiter } from './limiter.js';

const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS[1] the client's log of accepted requests (sorted set, score = ms), KEYS[2] its block flag.
// ARGV: window ms, max, a unique member. Returns {allowed, blocked, count, ms until reset}.
// A rejected request is not logged, so it does not extend the wait.
const HIT = `${NOW}
local window = tonumber(ARGV[1]) local max = tonumber(ARGV[2])
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return {0, 1, 0, blocked} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= max then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, 0, n, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, 0, n + 1, tonumber(oldest[2]) + window - now}`;

// KEYS[1] the client's log of error responses (a set of its own), KEYS[2] its block flag.
// ARGV: window ms, max, block duration ms, a unique member.
const ERROR = `${NOW}
local window = tonumber(ARGV[1]) local max = tonumber(ARGV[2]) local duration = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
if redis.call('ZCARD', KEYS[1]) >= max then
  redis.call('SET', KEYS[2], '1', 'PX', duration)
  redis.call('DEL', KEYS[1])
end
return 1`;

const COMMAND_TIMEOUT_MS = 500;
const PAUSE_AFTER_TIMEOUT_MS = 1000;
const PAUSED = new Error('Redis timed out recently; not asked for a moment');

export interface RedisLimiterOptions {
  url: string;
  prefix?: string;
  onFallback?: (err: Error) => void;
}

export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly fallback: MemoryLimiter;
  private readonly prefix: string;
  private readonly listeners: ((err: Error) => void)[] = [];
  private pausedUntil = 0;

  constructor(private readonly s: LimitSettings, private readonly opts: RedisLimiterOptions) {
    this.prefix = opts.prefix ?? 'hostplane:';
    this.redis = new Redis(opts.url, {
      // Fail fast instead of queueing: a request must not wait for a Redis that is gone.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 1000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => {}); // reported through onFallback when a decision needs it
    this.redis.defineCommand('hpHit', { numberOfKeys: 2, lua: HIT });
    this.redis.defineCommand('hpError', { numberOfKeys: 2, lua: ERROR });
    this.fallback = new MemoryLimiter(s);
    if (opts.onFallback) this.listeners.push(opts.onFallback);
  }

  onFallback(listener: (err: Error) => void) {
    this.listeners.push(listener);
  }

  private fellBack(err: Error) {
    for (const l of this.listeners) {
      try {
        l(err);
      } catch {
        // a failing listener must not turn a limit decision into a 500
      }
    }
  }

  /**
   * A client's keys: its log of accepted requests, its log of error responses and its block flag.
   * The two logs must be separate sets, or errors would eat the request budget and requests would
   * count as errors. One hash tag per client keeps them on one Redis Cluster slot.
   */
  private keys(client: string) {
    const base = `${this.prefix}{${client}}`;
    return { rate: `${base}:rate`, errors: `${base}:errors`, block: `${base}:block` };
  }

  async hit(client: string): Promise<Decision> {
    const { max, windowMs } = this.s.rateLimit;
    const k = this.keys(client);
    return this.shared(
      async () => {
        const [allowed, blocked, count, resetMs] = (await (this.redis as any).hpHit(
          k.rate, k.block, windowMs, max, crypto.randomUUID(),
        )) as number[];
        return {
          allowed: allowed === 1,
          blocked: blocked === 1,
          limit: max,
          // a blocked client has no budget left, whatever its request log holds
          remaining: blocked === 1 ? 0 : Math.max(0, max - count),
          resetMs: Math.max(0, resetMs),
        };
      },
      () => this.fallback.hit(client),
    );
  }

  async recordError(client: string): Promise<void> {
    const { max, windowMs, durationMs } = this.s.errorBlock;
    const k = this.keys(client);
    return this.shared(
      async () => {
        await (this.redis as any).hpError(k.errors, k.block, windowMs, max, durationMs, crypto.randomUUID());
      },
      () => this.fallback.recordError(client),
    );
  }

  /**
   * Runs `remote` on Redis, or `local` when Redis fails. A Redis that is gone fails at once (no
   * offline queue); one that hangs costs COMMAND_TIMEOUT_MS, so after a timeout Redis is left
   * alone for PAUSE_AFTER_TIMEOUT_MS and requests are not all slowed down by it.
   */
  private async shared<T>(remote: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (Date.now() < this.pausedUntil) {
      this.fellBack(PAUSED);
      return local();
    }
    try {
      return await remote();
    } catch (err) {
      if ((err as Error).message === 'Command timed out') this.pausedUntil = Date.now() + PAUSE_AFTER_TIMEOUT_MS;
      this.fellBack(err as Error);
      return local();
    }
  }

  async close() {
    await this.fallback.close();
    this.redis.disconnect();
  }
}
