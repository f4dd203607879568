// What every role of `node setup` knows of the node it sets up.
import { openStore, type Store } from '../db/index.js';
import type { Role } from './roles.js';

export interface NodeContext {
  roles: Role[];
  /** The host's full name (web1.example.net) and the first label, its name in the store (web1). */
  name: string;
  shortName: string;
  /** The store every node registers in: postgres://… */
  store: string;
}

/** Runs `work` on the node's store, closed afterwards. */
export async function withStore<T>(ctx: NodeContext, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(ctx.store);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
