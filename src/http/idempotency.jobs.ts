// The hourly purge of expired idempotency keys (API guide "Safe retries"). An expired key is free at
// once (a claim takes it over); the purge only keeps the table small.
import { nowIso } from '../db/time.js';
import { purgeJob } from '../queue/types.js';
import { IdempotencyRepository } from './idempotency.repository.js';

export const purgeIdempotencyKeysJob = purgeJob('idempotency-key', 'schedule', 'expired idempotency keys', (ctx) => new IdempotencyRepository(ctx.store.db).purge(nowIso()));

export const IDEMPOTENCY_JOBS = [purgeIdempotencyKeysJob];
