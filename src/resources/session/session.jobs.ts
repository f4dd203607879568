// The hourly purge of panel sessions past their hard end (API guide "Panel sessions (extension)").
// An ended session is refused on use at once; the purge only keeps the table small.
import { nowIso } from '../../db/time.js';
import { purgeJob } from '../../queue/types.js';
import { SessionRepository } from './session.repository.js';

export const purgeSessionsJob = purgeJob('session', 'purge', 'ended panel sessions', (ctx) => new SessionRepository(ctx.store.db).purgeSessions(nowIso()));

export const SESSION_JOBS = [purgeSessionsJob];
