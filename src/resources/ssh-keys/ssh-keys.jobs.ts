// Jobs of SSH keys (API guide "Queue jobs", "SSH keys"; docs/decisions/0024-ssh-keys.md):
// ('ssh-key', 'create' | 'delete'), enqueued on the queue of the package's web server, so they run
// on that server's host, where sshd reads the key file.
//
// Both end the same way: the package's whole current key set (every key not being deleted) is
// written to the key file, read back, and the run is done only when the file holds exactly that
// set. Runs on one web server write one package's file one at a time, and a run whose set changed
// while it wrote writes again, so a run that read an older set never has the last word. Every step
// converges: a run killed anywhere and run again ends in the same state.
import { Type } from 'typebox';
import { defineJob, DONE, objectIdOf, PermanentJobError, type JobContext, type JobResult } from '../job-contract.js';
import { webServerConn } from '../../provisioning/web/servers.repository.js';
import type { WebServerConn } from '../../provisioning/web/sites.js';
import { SshKeysRepository } from './ssh-keys.repository.js';

/** Writes of one key file, one after the other within this process (by state dir and Linux user). */
const writing = new Map<string, Promise<unknown>>();

function serially<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = writing.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => {});
  writing.set(key, tail);
  void tail.then(() => {
    if (writing.get(key) === tail) writing.delete(key);
  });
  return run;
}

/** How often a run writes again when the set keeps changing under it, before it lets the queue retry. */
const ROUNDS = 5;

const same = (a: string[] | null, b: string[]) => a !== null && a.length === b.length && a.every((k, i) => k === b[i]);

/** Writes the package's current key set until the file holds the set as the store has it after the write. */
async function syncKeyFile(ctx: JobContext, server: WebServerConn, packageId: number, linuxUser: string): Promise<void> {
  const repo = new SshKeysRepository(ctx.store.db);
  const web = ctx.drivers.web;
  await serially(`${server.stateDir}\0${linuxUser}`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const keys = await repo.keyLines(packageId);
      await web.setSshKeys(server, linuxUser, keys);
      const written = await web.sshKeys(server, linuxUser);
      if (!same(written, keys)) throw new Error(`the key file of ${linuxUser} on ${server.name} does not hold the keys written`);
      // Another write may have committed meanwhile: the file must show it too.
      if (same(await repo.keyLines(packageId), keys)) return;
    }
    throw new Error(`the keys of ${linuxUser} kept changing while they were written on ${server.name}`);
  });
}

async function runKeyJob(ctx: JobContext): Promise<JobResult> {
  const id = objectIdOf(ctx.job);
  const repo = new SshKeysRepository(ctx.store.db);
  const target = await repo.targetOf(id);
  if (!target) return DONE; // removed by an earlier run of the delete
  const deleting = target.state === 'deleting';
  if (deleting && ctx.job.action !== 'delete') return DONE; // the delete queued behind wins
  if (!target.server) throw new PermanentJobError(`web server ${target.serverName ?? '(none)'} of the package is not registered`);
  await syncKeyFile(ctx, webServerConn(target.server), target.packageId, target.linuxUser);
  if (deleting) await repo.delete(id);
  else await repo.transition(id, 'pending', 'live');
  return DONE;
}

const keyJob = (action: 'create' | 'delete') => defineJob({ type: 'ssh-key', action, payload: Type.Object({}), run: runKeyJob });

export const SSH_KEY_JOBS = [keyJob('create'), keyJob('delete')];
