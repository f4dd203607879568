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

export interface RedisLimiterOptions {
  url: string;
  prefix?: string;
  onFallback?: (err: Error) => void;
}

export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly fallback: MemoryLimiter;
  private readonly prefix: string;

  constructor(private readonly s: LimitSettings, private readonly opts: RedisLimiterOptions) {
    this.prefix = opts.prefix ?? 'hostplane:';
    this.redis = new Redis(opts.url, {
      // Fail fast instead of queueing: a request must not wait for a Redis that is gone.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      connectTimeout: 1000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => {}); // reported through onFallback when a decision needs it
    this.redis.defineCommand('hpHit', { numberOfKeys: 2, lua: HIT });
    this.redis.defineCommand('hpError', { numberOfKeys: 2, lua: ERROR });
    this.fallback = new MemoryLimiter(s);
  }

  private keys(client: string) {
    // One hash tag per client keeps both keys on one Redis Cluster slot.
    return [`${this.prefix}{${client}}:rate`, `${this.prefix}{${client}}:block`];
  }

  async hit(client: string): Promise<Decision> {
    const { max, windowMs } = this.s.rateLimit;
    try {
      const [allowed, blocked, count, resetMs] = (await (this.redis as any).hpHit(
        ...this.keys(client), windowMs, max, crypto.randomUUID(),
      )) as number[];
      return { allowed: allowed === 1, blocked: blocked === 1, limit: max, remaining: Math.max(0, max - count), resetMs: Math.max(0, resetMs) };
    } catch (err) {
      this.opts.onFallback?.(err as Error);
      return this.fallback.hit(client);
    }
  }

  async recordError(client: string): Promise<void> {
    const { max, windowMs, durationMs } = this.s.errorBlock;
    try {
      await (this.redis as any).hpError(...this.keys(client), windowMs, max, durationMs, crypto.randomUUID());
    } catch (err) {
      this.opts.onFallback?.(err as Error);
      await this.fallback.recordError(client);
    }
  }

  async close() {
    await this.fallback.close();
    this.redis.disconnect();
  }
}
