// Loopback ports for the daemons tests start (private mariadbd, CLI servers, protocol peers).
import net from 'node:net';

/** A loopback TCP port that was free a moment ago: a daemon binding it must still handle EADDRINUSE. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
