// The POST load of the audit trail bench (bench/audit.bench.ts): in a worker thread, so the client
// does not share the event loop of the server it measures. Plain JavaScript evaluated from a string
// (as bench/dns-load.ts says why): `connections` keep-alive connections, each sending one POST
// /dns-records after the other (a TXT record with a new name) until `count` are answered.
import { Worker } from 'node:worker_threads';

export interface PostLoad {
  base: string;
  token: string;
  domain: string;
  connections: number;
  count: number;
  /** Part of every record name, so each run creates new records. */
  tag: string;
  /** Each POST carries an Idempotency-Key of its own, a random UUID as clients send them (API guide "Safe retries"). */
  keys?: boolean;
}

export interface PostRun {
  /** ms from sending each POST to the end of its answer, answers other than 202 left out. */
  latencies: number[];
  /** Wall time of the whole run. */
  seconds: number;
  /** Answers other than 202 (their bodies' first one is thrown: a bench measures only what works). */
  failed: number;
}

const GENERATOR = String.raw`
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { parentPort, workerData } = require('node:worker_threads');
const { base, token, domain, connections, count, tag, keys } = workerData;
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const headers = { authorization: 'token ' + token, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.hostplane.v1+json' };
const latencies = [];
let next = 0, failed = 0, firstFailure = null;
function post(n) {
  const body = JSON.stringify({ data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'audit-' + tag + '-' + n, domain, data: 'bench' } } });
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path: '/dns-records', method: 'POST', agent, headers: { ...headers, ...(keys ? { 'idempotency-key': randomUUID() } : {}), 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode === 202) latencies.push(performance.now() - t0);
        else { failed++; firstFailure ??= res.statusCode + ' ' + Buffer.concat(chunks).toString().slice(0, 300); }
        resolve();
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function client() {
  while (next < count) await post(next++);
}
const started = performance.now();
Promise.all(Array.from({ length: connections }, client)).then(() => {
  agent.destroy();
  parentPort.postMessage({ latencies, seconds: (performance.now() - started) / 1000, failed, firstFailure });
}, (err) => parentPort.postMessage({ error: String(err) }));
`;

/** Runs one load in a worker thread: `await runPosts({ base, token, domain, connections: 8, count: 400, tag: 'r1' })`. */
export function runPosts(o: PostLoad): Promise<PostRun> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(GENERATOR, { eval: true, workerData: o });
    worker.once('message', (m: PostRun & { error?: string; firstFailure: string | null }) => {
      void worker.terminate();
      if (m.error) reject(new Error(m.error));
      else if (m.firstFailure) reject(new Error(`POST /dns-records answered ${m.firstFailure}`));
      else resolve({ latencies: m.latencies, seconds: m.seconds, failed: m.failed });
    });
    worker.once('error', reject);
  });
}
