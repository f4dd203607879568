// What the daily usage jobs of every resource share (databases, mailboxes): measure what is live
// on each registered server in chunks, store the figures, and carry on past a server that does not
// answer (its objects keep their last figures; the run then fails so that it is retried).
import { Type } from 'typebox';
import { nowIso } from '../db/time.js';
import { shortError } from './short-error.js';
import { defineJob, DONE, type JobContext } from './types.js';
import type { JobType } from './jobs.js';

/** What one refresh did: objects measured per server, and the servers that did not answer. */
export interface UsageRefresh {
  measured: Array<{ server: string; count: number }>;
  failed: Array<{ server: string; error: string }>;
}

/** Keys per measurement call: keeps one server's query or request reasonable. */
const CHUNK = 500;

/**
 * `await refreshServerUsage(servers, { live: (s) => repo.liveNamesOn(s.name), measure: (s, keys) => driver.usage(conn(s), keys),
 *   save: (s, usage, at) => repo.setUsage(s.name, usage, at) })`.
 */
export async function refreshServerUsage<S extends { name: string }>(
  servers: S[],
  o: {
    live(server: S): Promise<string[]>;
    measure(server: S, keys: string[]): Promise<Map<string, number>>;
    save(server: S, usage: Map<string, number>, at: string): Promise<void>;
  },
): Promise<UsageRefresh> {
  const result: UsageRefresh = { measured: [], failed: [] };
  for (const server of servers) {
    const keys = await o.live(server);
    if (keys.length === 0) continue;
    try {
      let count = 0;
      for (let i = 0; i < keys.length; i += CHUNK) {
        const at = nowIso();
        const usage = await o.measure(server, keys.slice(i, i + CHUNK));
        await o.save(server, usage, at);
        count += usage.size;
      }
      result.measured.push({ server: server.name, count });
    } catch (err) {
      result.failed.push({ server: server.name, error: shortError(err) });
    }
  }
  return result;
}

/**
 * The daily job that measures a resource's usage; a server that did not answer makes the run fail,
 * so it is retried: `usageRefreshJob('database', (ctx) => refreshDatabaseUsage(ctx.store, ctx.drivers.databases))`.
 */
export function usageRefreshJob<D>(type: JobType, refresh: (ctx: JobContext<unknown, D>) => Promise<UsageRefresh>) {
  return defineJob({
    type,
    action: 'refresh',
    payload: Type.Object({}),
    every: 24 * 60 * 60 * 1000,
    run: async (ctx: JobContext<unknown, D>) => {
      const failed = usageFailures(await refresh(ctx));
      if (failed) throw new Error(failed);
      return DONE;
    },
  });
}

/** One line naming the servers that could not be measured, or null when all were. */
export function usageFailures(r: Pick<UsageRefresh, 'failed'>): string | null {
  if (r.failed.length === 0) return null;
  return `usage not measured on ${r.failed.map((f) => `${f.server} (${f.error})`).join(', ')}`;
}
