// The database bench's HTTP client, in a process of its own (bench/databases-client.ts), so it does
// not share the event loop of the server it measures.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { now, type Reply, type Request } from '../databases-client.js';

/** The client process (bench/databases-client.ts): one request at a time, answered by `seq`. */
export class Client {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Error | null = null;

  constructor() {
    this.child = fork(fileURLToPath(new URL('../databases-client.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    this.child.on('message', (m: Reply) => {
      const w = this.waiting.get(m.seq);
      this.waiting.delete(m.seq);
      if (m.ok) w?.resolve(m.value);
      else w?.reject(new Error(m.error));
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`bench client exited (${signal ?? code})`);
      for (const w of this.waiting.values()) w.reject(this.exited);
      this.waiting.clear();
    });
  }

  call<T>(m: DistributiveOmit<Request, 'seq'>): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ ...m, seq });
    });
  }

  /**
   * How far the client's clock (timeOrigin + now()) is ahead of this process's, from the
   * quickest of `n` round trips, ± half of that round trip: `{ offset, rtt }`.
   */
  async clockOffset(n = 20): Promise<{ offset: number; rtt: number }> {
    let best = { offset: NaN, rtt: Infinity };
    for (let i = 0; i < n; i++) {
      const sent = now();
      const theirs = await this.call<number>({ op: 'clock' });
      const back = now();
      if (back - sent < best.rtt) best = { offset: theirs - (sent + back) / 2, rtt: back - sent };
    }
    return best;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    await this.call({ op: 'close' }).catch(() => {});
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await gone;
  }
}

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
