// A DNS server's sockets: UDP and TCP on one address and port, every query answered from the
// in-memory zones (query.ts). Transfers and queries signed with TSIG are handed to the signed path
// (transfers.ts) and answered when it is done; UDP is read in batches where the native reader is
// built (udp.ts; docs/decisions/0015-dns-udp-in-batches.md).
import { once } from 'node:events';
import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import { answerQuery } from './query.js';
import { AXFR, IXFR, questionType } from './transfer-messages.js';
import { tsigOffset } from './tsig.js';
import { bindUdp, type UdpBatchSetting, type UdpEndpoint } from './udp.js';
import type { ZoneSet } from './zone.js';

const TCP_IDLE_MS = 10_000;
const TCP_MAX_CONNECTIONS = 1000;
/** A TCP client that sends faster than it reads is cut off past this much unsent output. */
const TCP_MAX_BACKLOG = 1 << 20;

export interface DnsSocketsOptions {
  /** The zones every query is answered from. */
  zones: ZoneSet;
  /** DNS_UDP_BATCH. */
  udpBatch: UdpBatchSetting;
  /** The server's warning, at most one per interval. */
  warn: (err: unknown, msg: string) => void;
  /** A transfer or a query signed with TSIG (transfers.ts): the replies to send, in order. */
  answerSigned: (msg: Buffer, remote: string, transport: 'udp' | 'tcp') => Promise<Buffer[]>;
}

/** `await sockets.bind('127.0.0.1', 0)` (then `sockets.port`) … `await sockets.close()`. */
export class DnsSockets {
  /** The bound UDP/TCP port (the same for both), or null when not listening. */
  port: number | null = null;
  host: string | null = null;
  /** How UDP is read; null when not listening. */
  udp: UdpEndpoint | null = null;

  private readonly zones: ZoneSet;
  private readonly warn: (err: unknown, msg: string) => void;
  private readonly answerSigned: (msg: Buffer, remote: string, transport: 'udp' | 'tcp') => Promise<Buffer[]>;
  private tcp: net.Server | null = null;
  private readonly connections = new Set<net.Socket>();

  constructor(private readonly opts: DnsSocketsOptions) {
    this.zones = opts.zones;
    this.warn = opts.warn;
    this.answerSigned = opts.answerSigned;
  }

  /** Listens on UDP and TCP at `host:port`; port 0 picks one free for both. */
  async bind(host: string, port: number): Promise<void> {
    // Port 0: UDP picks a free port and TCP takes the same one; if TCP finds it taken, try again.
    for (let attempt = 0; ; attempt++) {
      const udp = await this.bindUdp(host, port);
      const bound = udp.port;
      try {
        this.tcp = await this.listenTcp(host, bound);
        this.udp = udp;
        this.port = bound;
        this.host = host;
        return;
      } catch (err) {
        await udp.close();
        if (port !== 0 || attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  private async bindUdp(host: string, port: number): Promise<UdpEndpoint> {
    // IPv4 unless the host is an IPv6 address; a host name is looked up once, here, as dgram would.
    const family = net.isIPv6(host) ? 6 : 4;
    const address = net.isIP(host) ? host : (await dnsLookup(host, { family })).address;
    const onError = (err: unknown) => this.warn(err, 'DNS UDP socket error');
    return bindUdp(address, port, family, this.opts.udpBatch, (msg, peer) => {
      if (msg.length >= 12 && msg.readUInt16BE(10) > 0 && tsigOffset(msg) >= 0) {
        // Answered later: the message and the sender are copied now (both are only lent).
        const from = peer();
        void this.answerSigned(Buffer.from(msg), from.address, 'udp').then((outs) => {
          for (const out of outs) from.send(out);
        });
        return null;
      }
      return this.answer(msg, 'udp');
    }, onError);
  }

  private listenTcp(host: string, port: number): Promise<net.Server> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.serveTcp(socket));
      server.maxConnections = TCP_MAX_CONNECTIONS;
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', (err) => this.warn(err, 'DNS TCP server error'));
        resolve(server);
      });
    });
  }

  /** RFC 7766: two-byte length before each message; several queries per connection, answered in order. */
  private serveTcp(socket: net.Socket) {
    this.connections.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('error', () => {});
    socket.on('close', () => this.connections.delete(socket));
    let pending: Buffer = Buffer.alloc(0);
    let busy = false;
    const frame = (out: Buffer) => {
      const f = Buffer.allocUnsafe(2 + out.length);
      f.writeUInt16BE(out.length, 0);
      out.copy(f, 2);
      return f;
    };
    const drain = () => {
      while (!busy && pending.length >= 2) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        const qtype = questionType(msg);
        if (qtype === AXFR || qtype === IXFR || (msg.length >= 12 && msg.readUInt16BE(10) > 0 && tsigOffset(msg) >= 0)) {
          // Answered in order: the connection is paused until every message of this one is written.
          busy = true;
          socket.pause();
          void (async () => {
            try {
              for (const out of await this.answerSigned(msg, socket.remoteAddress ?? '', 'tcp')) {
                if (socket.destroyed) return;
                // A transfer may be large: follow the client's pace instead of buffering it all.
                if (!socket.write(frame(out))) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
              }
            } catch (err) {
              this.warn(err, 'DNS transfer failed');
              socket.destroy();
            } finally {
              busy = false;
              if (!socket.destroyed) {
                socket.resume();
                drain();
              }
            }
          })();
          return;
        }
        const out = this.answer(msg, 'tcp');
        if (!out) continue;
        socket.write(frame(out));
        if (socket.writableLength > TCP_MAX_BACKLOG) {
          socket.destroy();
          return;
        }
      }
    };
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      drain();
    });
  }

  /** One ordinary query answered from the zones; null: nothing to send. */
  answer(msg: Buffer, transport: 'udp' | 'tcp', reserve?: number): Buffer | null {
    try {
      return answerQuery(this.zones, msg, { transport, reserve });
    } catch (err) {
      // answerQuery is meant to be total; if it is not, one bad packet must not stop the server.
      this.warn(err, 'DNS query handling failed');
      return null;
    }
  }

  /** Stops answering: both sockets closed, open TCP connections cut. */
  async close(): Promise<void> {
    const closing: Promise<void>[] = [];
    if (this.udp) {
      closing.push(this.udp.close());
    }
    if (this.tcp) {
      const tcp = this.tcp;
      closing.push(new Promise((resolve) => tcp.close(() => resolve())));
      for (const s of this.connections) s.destroy();
    }
    await Promise.all(closing);
  }
}
