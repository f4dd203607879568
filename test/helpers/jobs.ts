// Jobs in tests: registries of test jobs, the application's job runs as plain functions, and the
// context a worker would hand a run (src/queue/types.ts).
import { Type } from 'typebox';
import type { Store } from '../../src/db/index.js';
import { buildDrivers, type Drivers } from '../../src/provisioning/drivers.js';
import { buildJobs } from '../../src/resources/jobs.js';
import type { JobAction, JobType } from '../../src/queue/jobs.js';
import { defineJob, JobRegistry, type JobContext, type JobResult } from '../../src/queue/types.js';
import { expect } from 'vitest';
import { call, testConfig, type TestApp } from './app.js';
import { pollUntil } from './wait.js';

/** A job's run as a plain function. */
export type JobRun = (ctx: JobContext<any>) => Promise<JobResult>;

/** Test jobs that accept any payload: `new TestJobs().register('dns-record', 'create', async (ctx) => ({ status: 'done' }))`. */
export class TestJobs extends JobRegistry {
  register(type: JobType, action: JobAction, run: JobRun): this {
    return this.add(defineJob({ type, action, payload: Type.Unknown(), run }));
  }
}

/** The application's job runs by type and action: `appRuns().get('dns-record', 'create')!(ctx)`. */
export function appRuns() {
  const jobs = buildJobs();
  return {
    get(type: JobType, action: JobAction): JobRun | undefined {
      const d = jobs.get(type, action);
      return d && ((ctx) => d.run(ctx));
    },
  };
}

/** The real drivers of a test store, built as `serve` builds them. */
export const testDrivers = (store: Store, env: Record<string, string> = {}): Drivers => buildDrivers({ config: testConfig(env), store });

/** Polls the job behind a 202 (its Content-Location) as `token` until it is done; a failed job fails the test with its error. */
export async function jobDone(t: TestApp, token: string, accepted: { headers: Record<string, unknown> }): Promise<void> {
  const url = String(accepted.headers['content-location']).replace(/^https?:\/\/[^/]+/, '');
  const job = await pollUntil(
    () => call(t.app, 'GET', url, { token }).then((r) => r.json.data.attributes),
    (a) => a.status !== 'pending',
    `job ${url}`,
    20_000,
  );
  expect(job).toMatchObject({ status: 'done', error: null });
}
