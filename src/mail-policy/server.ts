// The policy service's TCP listener (docs/decisions/0020-outbound-limits.md): Postfix's smtpd
// processes connect to it from the submission services' check_policy_service, each keeping one
// connection open for many requests. Requests of one connection are answered in order.
import net from 'node:net';
import type { Logger } from 'pino';
import { MailPolicy, type LimitsSource } from './policy.service.js';
import { PolicyProtocolError, PolicyReader, policyAnswer } from './protocol.js';

/** How often mailboxes whose hour has passed are forgotten. */
const SWEEP_MS = 60_000;

export interface MailPolicyServer {
  /** Where it listens (the port the OS chose for port 0). */
  address: { host: string; port: number };
  policy: MailPolicy;
  close(): Promise<void>;
}

/** `await startMailPolicyServer({ host: '127.0.0.1', port: 10040 }, limits, log)`; rejects when it cannot listen. */
export async function startMailPolicyServer(listen: { host: string; port: number }, limits: LimitsSource, log: Logger): Promise<MailPolicyServer> {
  const policy = new MailPolicy(limits, log);
  const sockets = new Set<net.Socket>();
  let next = 0;
  const server = net.createServer((socket) => {
    const conn = String(++next);
    sockets.add(socket);
    socket.setEncoding('utf8');
    const reader = new PolicyReader();
    let answering = Promise.resolve();
    socket.on('data', (chunk: string) => {
      let requests;
      try {
        requests = reader.push(chunk);
      } catch (err) {
        if (!(err instanceof PolicyProtocolError)) throw err;
        log.warn({ err: err.message }, 'mail policy: a client broke the protocol; connection closed');
        socket.destroy();
        return;
      }
      for (const q of requests) {
        answering = answering.then(async () => {
          const action = await policy.decide(conn, q).catch((err: unknown) => {
            log.error({ err }, 'mail policy: a request failed');
            return '451 4.3.0 The sending limits cannot be checked at the moment; try again later';
          });
          if (!socket.destroyed) socket.write(policyAnswer(action));
        });
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      // After the answers in flight: a closing connection's last request still settles first.
      void answering.then(() => policy.closed(conn));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const sweep = setInterval(() => policy.counter.sweep(), SWEEP_MS);
  sweep.unref();
  const bound = server.address() as net.AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    policy,
    close: async () => {
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
