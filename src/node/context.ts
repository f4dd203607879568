// What every role of `node setup` knows of the node it sets up.
import { openStore, type Store } from '../db/index.js';
import type { Role } from './roles.js';

export interface NodeContext {
  roles: Role[];
  /** The host's full name (web1.example.net) and the first label, its name in the store (web1). */
  name: string;
  shortName: string;
  /** What DNS serves for this node: --address, or the host's global addresses. */
  addresses: string[];
  /** The store this node's processes use: loopback on the api node, else the api node's --store. */
  store: string;
  /** The API's base URL (https://api.example.net). */
  publicBaseUrl: string;
  acme: { directory: string; email: string };
  /** The dns role's server: hostplane's own, or a Knot secondary of the hostplane DNS server at `primary`. */
  dns: { server: 'hostplane' } | { server: 'knot'; primary: { host: string; port: number }; catalogZone: string };
  /** True when hostplane's own units or settings changed in this run: its processes restart. */
  changed: boolean;
  /** This node's own certificate (ACME, through lego), got once per run by the first role that needs it. */
  certificate(): Promise<{ cert: string; key: string }>;
}

/** Runs `work` on the node's store, closed afterwards. */
export async function withStore<T>(ctx: Pick<NodeContext, 'store'>, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(ctx.store);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
