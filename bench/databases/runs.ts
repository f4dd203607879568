// What the database bench times: create → first login through the product, against the floor —
// the same CREATE DATABASE, CREATE USER and GRANT sent straight to MariaDB — per engine.
import crypto from 'node:crypto';
import os from 'node:os';
import { fmt } from '../report.js';
import { now, type FloorTimes, type ProductTimes } from '../databases-client.js';
import { CREATES, WARMUP, COMPARE, PREFIX, type EngineName, checkInterrupted, dropBenchObjects } from './settings.js';
import { type Tree, THIS_TREE, type Instance, startInstance } from './instance.js';
import { Client } from './client.js';

/** One product create, ms from sending the POST. */
export interface ProductRun {
  /** 202 received. */
  post: number;
  /** The job's driver began `create` (the job's reads before it). */
  createStart: number;
  /** `create` returned: its statements ran. */
  createEnd: number;
  /** First successful login with the returned password. */
  login: number;
  /** `isCreated` confirmed the change. */
  checked: number;
  /** The job's finished_at (1 ms resolution, wall clock). */
  done: number;
  attempts: number;
}

/** One floor run, ms from sending the first statement. */
export interface FloorRun {
  /** CREATE DATABASE, CREATE USER, GRANT returned. */
  statements: number;
  login: number;
  attempts: number;
}

/**
 * One product create by the client; the driver's marks (taken in this process) are moved onto the
 * client's clock with `offset`.
 */
export async function productRun(h: Instance, client: Client, offset: number): Promise<ProductRun> {
  checkInterrupted();
  const t = await client.call<ProductTimes>({ op: 'product', req: { base: h.base, token: h.owner.token, packageId: h.packageId, version: h.version } });
  const m = h.marks.get(t.username) ?? {};
  h.marks.delete(t.username);
  const ours = (at: number | undefined) => (at ?? NaN) + offset - t.t0;
  return {
    post: t.post - t.t0,
    createStart: ours(m.createStart),
    createEnd: ours(m.createEnd),
    login: t.login - t.t0,
    checked: ours(m.checkEnd),
    done: t.finishedAt - t.wall0,
    attempts: t.attempts,
  };
}

export let floorSeq = 0;

/** The bare statements on the client's admin connection for a new name, then the first login: as an operator would by hand. */
export async function floorRun(client: Client): Promise<FloorRun> {
  checkInterrupted();
  const name = `${PREFIX}_f${++floorSeq}`;
  const password = crypto.randomBytes(15).toString('base64url').slice(0, 20);
  const t = await client.call<FloorTimes>({ op: 'floor', name, password });
  return { statements: t.statements - t.t0, login: t.login - t.t0, attempts: t.attempts };
}

export interface EngineResult {
  engine: EngineName;
  product: ProductRun[];
  /** The BENCH_COMPARE checkout's product runs, in the same steps as `product`. */
  compared: ProductRun[] | null;
  floor: FloorRun[];
  loadBefore: number[];
  loadAfter: number[];
  seconds: number;
}

export async function engineRun(engine: EngineName, version: string, client: Client, compare: Tree | null, log: (s: string) => void): Promise<EngineResult> {
  const instances: Instance[] = [];
  try {
    instances.push(await startInstance(engine, version));
    if (compare) instances.push(await startInstance(engine, version, compare));
    for (const h of instances) {
      const w = h.tree.workerSettings(h.config);
      const lease = w.leaseMs ?? (h.store.holdLock ? h.tree.DEFAULT_LEASE_MS.sessionLock : h.tree.DEFAULT_LEASE_MS.leaseOnly);
      const which = h.tree === THIS_TREE ? '' : ` (compared: ${COMPARE})`;
      log(`${engine}: app${which} on ${h.base}, worker concurrency ${w.concurrency}, poll ${w.pollMs} ms, lease ${lease} ms; package ${h.packageId} (${PREFIX})`);
    }
    // The client's clock against ours, for the driver's marks (the figures themselves are the client's own).
    const clock = await client.clockOffset();
    log(`${engine}: client clock ${fmt(clock.offset, 3)} ms ahead of the bench's (± ${fmt(clock.rtt / 2, 3)} ms)`);
    /** A floor run, then a product run of each instance, the instances' order alternating with `i`. */
    const step = async (i: number) => {
      const floor = await floorRun(client);
      const runs: ProductRun[] = [];
      for (const k of instances.map((_, k) => (k + i) % instances.length)) runs[k] = await productRun(instances[k], client, clock.offset);
      return { floor, runs };
    };
    for (let i = 0; i < WARMUP; i++) await step(i);
    const out: EngineResult = { engine, product: [], compared: compare ? [] : null, floor: [], loadBefore: os.loadavg(), loadAfter: [], seconds: 0 };
    const started = now();
    for (let i = 0; i < CREATES; i++) {
      const { floor, runs } = await step(i);
      out.floor.push(floor);
      out.product.push(runs[0]);
      out.compared?.push(runs[1]);
    }
    out.seconds = (now() - started) / 1000;
    out.loadAfter = os.loadavg();
    return out;
  } finally {
    for (const h of instances) await h.close();
    const dropped = await dropBenchObjects();
    log(`${engine}: dropped ${dropped.databases} databases and ${dropped.users} users named ${PREFIX}_*`);
  }
}
