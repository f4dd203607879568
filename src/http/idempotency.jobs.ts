// The hourly purge of expired idempotency keys (API guide "Safe retries"): a scheduled job, so one
// worker of the deployment runs it per turn. An expired key is free at once (a claim takes it over);
// the purge only keeps the table small.
import { Type } from 'typebox';
import { nowIso } from '../db/time.js';
import { DONE, defineJob } from '../queue/types.js';
import { IdempotencyRepository } from './idempotency.repository.js';

export const purgeIdempotencyKeysJob = defineJob({
  type: 'idempotency-key',
  action: 'schedule',
  payload: Type.Object({}),
  every: 60 * 60 * 1000,
  run: async (ctx) => {
    const purged = await new IdempotencyRepository(ctx.store.db).purge(nowIso());
    if (purged) ctx.log.info({ purged }, 'purged expired idempotency keys');
    return DONE;
  },
});

export const IDEMPOTENCY_JOBS = [purgeIdempotencyKeysJob];
