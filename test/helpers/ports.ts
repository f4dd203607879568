// Loopback ports for the daemons tests start (private mariadbd, CLI servers, protocol peers).
// They are drawn below the kernel's ephemeral range: a port taken from that range by listen(0) and
// handed to a daemon seconds later may meanwhile be the local port of any outgoing connection
// (the suite makes thousands, to PostgreSQL, MariaDB, Redis and its own servers).
import fs from 'node:fs';
import net from 'node:net';

const LOWEST = 15_000;

/** The first port of the kernel's ephemeral range (32768 unless the machine says otherwise). */
function ephemeralStart(): number {
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return first > LOWEST + 1000 ? first : 32_768;
  } catch {
    return 32_768;
  }
}
const HIGHEST = ephemeralStart() - 1;

/** Whether a listener may bind 127.0.0.1:<port> now. */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A random port below the ephemeral range with <span> - 1 more after it, all free a moment ago. */
export async function freeRun(span: number, offsets: number[] = Array.from({ length: span }, (_, i) => i)): Promise<number> {
  for (;;) {
    const base = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST - span));
    let free = true;
    for (const off of offsets) if (!(free = await canListen(base + off))) break;
    if (free) return base;
  }
}

/** A loopback TCP port that was free a moment ago: a daemon binding it must still handle EADDRINUSE. */
export function freePort(): Promise<number> {
  return freeRun(1);
}
