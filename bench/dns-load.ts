// The UDP load generator of the DNS bench (bench/dns.bench.ts, docs/performance.md "DNS"): runs
// in a worker thread, so it does not share the event loop of the DNS server it measures.
//
// The worker is plain JavaScript evaluated from a string: `node --import tsx` does not reach
// worker threads on Node 20, and the generator needs nothing but dgram. It keeps `window` queries
// outstanding, sends a new one for every answer, and replaces a query unanswered after
// `timeoutMs` (UDP on loopback drops when the receive buffer overflows; those count as lost).
import { Worker } from 'node:worker_threads';

export interface LoadOptions {
  host: string;
  port: number;
  /** Encoded queries (any id); sent round-robin, each with a fresh id. */
  queries: Buffer[];
  window: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
}

export interface LoadResult {
  /** Answers received inside the measured interval. */
  answered: number;
  /** Answers with rcode ≠ NOERROR or no answer records (the bench queries only existing records). */
  bad: number;
  /** Queries unanswered after timeoutMs, inside the measured interval. */
  lost: number;
  seconds: number;
  /** Round-trip latency in ms, over the answered queries of the measured interval. */
  p50: number;
  p99: number;
  /** Event-loop utilisation of the generator's thread over the measured interval (1 = always busy). */
  generatorElu: number;
}

const GENERATOR = String.raw`
const dgram = require('node:dgram');
const { performance } = require('node:perf_hooks');
const { parentPort, workerData } = require('node:worker_threads');
const { host, port, queries, window, warmupMs, durationMs, timeoutMs } = workerData;
const packets = queries.map((q) => Buffer.from(q));
const sock = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
const outstanding = new Map();
let nextId = 0, qi = 0, measuring = false, finished = false, startedAt = 0;
let answered = 0, bad = 0, lost = 0, elu0 = null;
const lat = [];
function send() {
  if (finished) return;
  let id;
  do { id = nextId = (nextId + 1) & 0xffff; } while (outstanding.has(id));
  const b = Buffer.from(packets[qi++ % packets.length]);
  b.writeUInt16BE(id, 0);
  outstanding.set(id, performance.now());
  sock.send(b);
}
sock.on('message', (msg) => {
  const now = performance.now();
  const id = msg.readUInt16BE(0);
  const sentAt = outstanding.get(id);
  if (sentAt === undefined) return;
  outstanding.delete(id);
  if (measuring) {
    answered++;
    lat.push(now - sentAt);
    if ((msg[3] & 0x0f) !== 0 || msg.readUInt16BE(6) === 0) bad++;
  }
  send();
});
sock.connect(port, host, () => {
  for (let i = 0; i < window; i++) send();
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, sentAt] of outstanding) {
      if (now - sentAt < timeoutMs) continue;
      outstanding.delete(id);
      if (measuring) lost++;
      send();
    }
  }, 50);
  setTimeout(() => {
    measuring = true;
    startedAt = performance.now();
    elu0 = performance.eventLoopUtilization();
    setTimeout(() => {
      measuring = false;
      finished = true;
      const seconds = (performance.now() - startedAt) / 1000;
      const generatorElu = performance.eventLoopUtilization(elu0).utilization;
      clearInterval(sweep);
      sock.close();
      lat.sort((a, b) => a - b);
      const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] : NaN);
      parentPort.postMessage({ answered, bad, lost, seconds, p50: pct(50), p99: pct(99), generatorElu });
    }, durationMs);
  }, warmupMs);
});
`;

/** `await runLoad({ host: '127.0.0.1', port, queries, window: 64, warmupMs: 1000, durationMs: 5000, timeoutMs: 500 })`. */
export function runLoad(o: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(GENERATOR, { eval: true, workerData: { ...o, queries: o.queries.map((q) => new Uint8Array(q)) } });
    worker.once('message', (r: LoadResult) => {
      resolve(r);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
    });
  });
}
