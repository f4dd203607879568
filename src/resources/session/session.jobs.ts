// The hourly purge of panel sessions past their hard end (API guide "Panel sessions (extension)"): a
// scheduled job, so one worker of the deployment runs it per turn. An ended session is refused on
// use at once; the purge only keeps the table small.
import { Type } from 'typebox';
import { nowIso } from '../../db/time.js';
import { DONE, defineJob } from '../../queue/types.js';
import { SessionRepository } from './session.repository.js';

export const purgeSessionsJob = defineJob({
  type: 'session',
  action: 'purge',
  payload: Type.Object({}),
  every: 60 * 60 * 1000,
  run: async (ctx) => {
    const purged = await new SessionRepository(ctx.store.db).purgeSessions(nowIso());
    if (purged) ctx.log.info({ purged }, 'purged ended panel sessions');
    return DONE;
  },
});

export const SESSION_JOBS = [purgeSessionsJob];
