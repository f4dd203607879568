// The DNS server's UDP socket (docs/decisions/0015-dns-udp-in-batches.md). Two ways to the same
// contract: the native batch reader (native/udp-batch: recvmmsg/sendmmsg on node's own loop, one
// call into JavaScript per batch, no buffer allocated per datagram) when it is built, else node's
// dgram. DNS_UDP_BATCH chooses: auto (the batch reader when built), on (it or fail), off (dgram).
import dgram from 'node:dgram';
import { createRequire } from 'node:module';
import type { Config } from '../config.js';

/** Where a query came from; `send` may be called later (an answer made asynchronously). */
export interface UdpPeer {
  readonly address: string;
  readonly port: number;
  send(out: Buffer): void;
}

/**
 * One datagram: `msg` is valid only during the call (copy it to keep it); the reply returned is
 * sent to the sender. `peer()` is for an answer made later (it reads the sender's address).
 */
export type UdpHandler = (msg: Buffer, peer: () => UdpPeer) => Buffer | null;

export interface UdpEndpoint {
  readonly port: number;
  /** 'batch' (the native reader) or 'dgram'. */
  readonly kind: 'batch' | 'dgram';
  /** On dgram because the reader cannot be used: why (not built). */
  readonly notBatch?: string;
  close(): Promise<void>;
}

export type UdpBatchSetting = Config['dns']['udpBatch'];

interface UdpBatchAddon {
  BATCH: number;
  IN_SLOT: number;
  OUT_SLOT: number;
  open(family: 4 | 6, address: string, port: number, input: Uint8Array, output: Uint8Array, meta: Int32Array, onBatch: (n: number) => void): object;
  port(socket: object): number;
  peer(socket: object, slot: number): [address: string, port: number, sockaddr: Buffer];
  sendTo(socket: object, out: Uint8Array, sockaddr: Buffer): void;
  close(socket: object): void;
}

/** The built reader (`npm run build:native`). */
export const UDP_BATCH_ADDON = new URL('../../native/udp-batch/build/Release/udp_batch.node', import.meta.url).pathname;
let addon: UdpBatchAddon | Error | undefined;

/** The native batch reader, or why it cannot be used (not built: `npm run build:native`). */
export function udpBatchAddon(): UdpBatchAddon | Error {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)(UDP_BATCH_ADDON) as UdpBatchAddon;
    } catch (err) {
      addon = new Error(`the native UDP batch reader is not available (${(err as Error).message.split('\n')[0]}); build it with npm run build:native`);
    }
  }
  return addon;
}

/**
 * Binds `address:port` (an IP; port 0 picks one) and calls `handle` for each datagram.
 * `onError` hears what goes wrong after binding (a handler that throws).
 */
export async function bindUdp(
  address: string,
  port: number,
  family: 4 | 6,
  setting: UdpBatchSetting,
  handle: UdpHandler,
  onError: (err: unknown) => void,
): Promise<UdpEndpoint> {
  const native = udpBatchAddon();
  if (setting !== 'off' && !(native instanceof Error)) return bindBatch(native, address, port, family, handle, onError);
  if (setting === 'on') throw new Error(`DNS_UDP_BATCH=on: ${(native as Error).message}`);
  const endpoint = await bindDgram(address, port, family, handle, onError);
  return native instanceof Error ? { ...endpoint, notBatch: native.message } : endpoint;
}

function bindBatch(native: UdpBatchAddon, address: string, port: number, family: 4 | 6, handle: UdpHandler, onError: (err: unknown) => void): UdpEndpoint {
  const { BATCH, IN_SLOT, OUT_SLOT } = native;
  // Not zeroed (only what the kernel writes is read): the pages are touched only as far as used.
  const input = Buffer.allocUnsafeSlow(BATCH * IN_SLOT);
  const output = Buffer.allocUnsafeSlow(BATCH * OUT_SLOT);
  const meta = new Int32Array(BATCH * 4);
  let closed = false;
  // One sender per slot, made when a handler asks (an answer sent later keeps its own copy).
  const peers = Array.from({ length: BATCH }, (_, slot) => (): UdpPeer => {
    const [to, toPort, sockaddr] = native.peer(socket, slot);
    return { address: to, port: toPort, send: (out) => !closed && native.sendTo(socket, out, sockaddr) };
  });
  const socket = native.open(family, address, port, input, output, meta, (n) => {
    // A negative count: an error on the socket (the reader has taken it and reads on).
    if (n < 0) onError(new Error(`DNS UDP socket error (libuv ${n})`));
    for (let i = 0; i < n; i++) {
      // [1]: cut (longer than a slot) or from port 0 (nothing can be sent there): not answered.
      if (meta[i * 4 + 1]) continue;
      const at = i * IN_SLOT;
      let out: Buffer | null;
      try {
        out = handle(input.subarray(at, at + meta[i * 4]), peers[i]);
      } catch (err) {
        onError(err);
        continue;
      }
      if (!out) continue;
      if (out.length <= OUT_SLOT) {
        output.set(out, i * OUT_SLOT);
        meta[i * 4 + 2] = out.length;
      } else {
        peers[i]().send(out);
      }
    }
  });
  return {
    port: native.port(socket),
    kind: 'batch',
    close: () => {
      // The port is free when this returns (the descriptor is closed at once).
      if (!closed) {
        closed = true;
        native.close(socket);
      }
      return Promise.resolve();
    },
  };
}

async function bindDgram(address: string, port: number, family: 4 | 6, handle: UdpHandler, onError: (err: unknown) => void): Promise<UdpEndpoint> {
  // Replies go to the address a query came from, always an IP: no lookup (dgram's default
  // asks dns.lookup, which answers an IP a tick later, for every reply).
  const lookup = (to: string, _family: unknown, done: (err: Error | null, address: string, family: number) => void) => done(null, to, family);
  const sock = dgram.createSocket({ type: family === 6 ? 'udp6' : 'udp4', lookup: lookup as unknown as dgram.SocketOptions['lookup'] });
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, address, () => {
      sock.off('error', reject);
      resolve();
    });
  });
  let closed = false;
  // Errors of sending are dropped by dgram; a socket closed meanwhile (an answer made later) throws.
  const send = (out: Buffer, to: string, toPort: number) => {
    if (closed) return;
    try {
      sock.send(out, toPort, to);
    } catch (err) {
      onError(err);
    }
  };
  sock.on('error', onError);
  sock.on('message', (msg, rinfo) => {
    // Nothing can be sent to port 0 (dgram throws): such a datagram is forged or broken.
    if (rinfo.port === 0) return;
    let out: Buffer | null;
    try {
      out = handle(msg, () => ({ address: rinfo.address, port: rinfo.port, send: (o) => send(o, rinfo.address, rinfo.port) }));
    } catch (err) {
      onError(err);
      return;
    }
    if (out) send(out, rinfo.address, rinfo.port);
  });
  return {
    port: sock.address().port,
    kind: 'dgram',
    close: () => {
      closed = true;
      return new Promise((resolve) => sock.close(() => resolve()));
    },
  };
}
