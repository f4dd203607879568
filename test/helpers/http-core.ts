// The HTTP core fixture against GET /customers and PATCH /customers/{id}: the
// standard tenants on one store, the customer documents a client sees (API guide "Customers"),
// bodies; and a raw TCP client for what only a listening server shows.
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { BASE, createTestApp, freshStore, type EngineName, type TestApp, type TestStore } from './app.js';
import { filledLater } from './suite.js';
import { seedTenants, type Tenant, type Tenants } from './tenants.js';

export const VND = 'application/vnd.api+json';
export const JSON_CT = 'application/json';

/** The whole wire representation of a seeded tenant's customer (API guide "Customers"). */
export function customer(key: string, c: Tenant, reseller: Tenant | null, isReseller = false) {
  return {
    type: 'customer',
    id: c.customerId,
    attributes: {
      organization: `${key} GmbH`,
      name: `${key} Admin`,
      email: `admin@${key}.example`,
      phone: '+49 30 1234567',
      is_reseller: isReseller,
      is_login_disabled: false,
      external_customer_id: null,
    },
    relationships: { reseller: { data: reseller ? { type: 'customer', id: reseller.customerId } : null } },
    links: { self: `${BASE}/customers/${c.customerId}` },
  };
}

/** A document with one error for a request to `url` (relative): `errorDoc('/customers', { id: 'unauthorized', … })`. */
export const errorDoc = (url: string, error: Record<string, unknown>) => ({ errors: [error], links: { self: `${BASE}${url}` } });

/** A PATCH /customers/{id} body as a string. */
export const patchBody = (id: string, attributes: Record<string, unknown> = { is_login_disabled: false }) =>
  JSON.stringify({ data: { type: 'customer', id, attributes } });

/**
 * Registers the hooks that build the fixture for the surrounding describe and returns its parts:
 * `t` (BODY_LIMIT_BYTES=2048) and, with `{ vario: true }`, `vario` (API_VENDOR=variomedia) on one
 * store `ts`; `resellerList` is the reseller's GET /customers document.
 */
export function useHttpCore(engine: EngineName, o: { vario?: boolean } = {}) {
  const ts = filledLater<TestStore>();
  const t = filledLater<TestApp>();
  const vario = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const resellerList: unknown = filledLater();

  beforeAll(async () => {
    Object.assign(ts, await freshStore(engine));
    Object.assign(t, await createTestApp(engine, { BODY_LIMIT_BYTES: '2048' }, { store: ts }));
    if (o.vario) Object.assign(vario, await createTestApp(engine, { API_VENDOR: 'variomedia' }, { store: ts }));
    Object.assign(x, await seedTenants(t.admin));
    Object.assign(resellerList as object, {
      links: { self: `${BASE}/customers` },
      data: [customer('reseller', x.reseller, null, true), customer('end1', x.end1, x.reseller), customer('end2', x.end2, x.reseller)],
      meta: { total: 3 },
    });
  });
  afterAll(async () => {
    await t.close?.();
    await vario.close?.();
    await ts.drop?.();
  });

  return { ts, t, vario, x, resellerList };
}

export interface RawResponse {
  /** `HTTP/1.1 405 Method Not Allowed` */
  statusLine: string;
  /** Header names lower-cased; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `request` (raw bytes, e.g. `CONNECT a.example:443 HTTP/1.1\r\n\r\n`) on a new TCP
 * connection to 127.0.0.1:`port` and resolves with the response once the server closes the
 * connection. `halfClose` ends the client's side right after the request (shutdown(SHUT_WR)).
 * Rejects, with what arrived, when the server does not close within 10 s.
 */
export function rawRequest(port: number, request: string, o: { halfClose?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(request);
      if (o.halfClose) socket.end();
    });
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within 10 s; received: ${JSON.stringify(Buffer.concat(chunks).toString())}`));
    }, 10_000);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {}); // a reset after the answer is not the test's subject; 'close' follows
    socket.on('close', () => {
      clearTimeout(guard);
      const text = Buffer.concat(chunks).toString();
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = (split === -1 ? text : text.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ statusLine, headers, body: split === -1 ? '' : text.slice(split + 4) });
    });
  });
}

/** Starts `app` on a free loopback port (closed with the app) and returns the port. */
export async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as net.AddressInfo).port;
}
