// In-process signals between the parts of one process that share a Store: the API that enqueues a
// job and the worker beside it, the job that records a DNS change and the DNS server beside it. The
// in-process counterpart of PostgreSQL's LISTEN/NOTIFY, one per Store (openStore builds it), so
// nothing is kept in module state: two Stores are two separate processes as far as signals go.

/** A channel's listeners; emit calls each in turn and returns how many there were. */
export class Signals {
  private readonly channels = new Map<string, Set<(payload: unknown) => void>>();
  /** Tags this Store's NOTIFYs, so its own listeners (woken here already) skip them. */
  readonly tag = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  /** `const off = store.signals.on('jobs', () => wake())`; `off()` unsubscribes. */
  on<T = unknown>(channel: string, listener: (payload: T) => void): () => void {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(listener as (payload: unknown) => void);
    return () => {
      set.delete(listener as (payload: unknown) => void);
      if (!set.size && this.channels.get(channel) === set) this.channels.delete(channel);
    };
  }

  emit(channel: string, payload?: unknown): number {
    const set = this.channels.get(channel);
    if (!set) return 0;
    for (const listener of [...set]) listener(payload);
    return set.size;
  }

  /** The listeners of `channel`, for an offer that the first taker answers (a fresh job's slot). */
  listeners<T = unknown>(channel: string): Iterable<(payload: T) => unknown> {
    return (this.channels.get(channel) ?? []) as Iterable<(payload: T) => unknown>;
  }
}
