// The client of the databases bench (bench/databases.bench.ts; docs/performance.md "Databases"),
// in a process of its own, as a real API client is: it sends POST /databases and logs in with the
// returned password (the product), and runs the bare statements on its own admin connection and
// logs in the same way (the floor). The bench's process holds only what it measures (the app and
// its worker), so the client's CPU (≈ 1 ms per login attempt) does not queue behind the server's
// event loop, nor the server behind it.
//
// Started by the bench with fork() (`--import tsx`, which does not reach worker threads on Node 20).
// Messages: a Request in, a Reply out with the same `seq`. Times are absolute (performance.timeOrigin
// + performance.now(), ms), so the bench can compare them with the marks it takes in its own process.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { sleep, ACCEPT, JSONAPI, jobFinishedAt } from './report.js';

/** What the client is told once. */
export interface ClientSettings {
  /** The server as an admin URL (the floor's connection). */
  mariadbUrl: string;
  /** 0: the next login attempt starts as soon as one fails; else the interval between their starts. */
  pollMs: number;
  /** A login that needs more attempts than this, or longer than limitMs, fails the bench. */
  maxAttempts: number;
  limitMs: number;
  /** How often the job is polled once the login works (untimed: runs must not overlap). */
  jobPollMs: number;
  /** The app's PUBLIC_BASE_URL, replaced in the job link by `base`. */
  publicBaseUrl: string;
  /**
   * How the POST is sent: `http` (node:http, one kept-alive connection) or `fetch` (undici, which
   * costs the client 1–2 ms more per request on the bench's machine).
   */
  httpClient: 'http' | 'fetch';
}

export interface ProductRequest {
  /** The app's listening address, `http://127.0.0.1:<port>`. */
  base: string;
  token: string;
  packageId: string;
  version: string;
}

/** One product create; absolute times (ms). */
export interface ProductTimes {
  /** POST sent. */
  t0: number;
  /** Wall clock at t0 (for the job's finished_at, 1 ms resolution). */
  wall0: number;
  /** 202 received and its body read. */
  post: number;
  /** First successful login with the returned password. */
  login: number;
  attempts: number;
  username: string;
  /** The job's finished_at (wall clock ms). */
  finishedAt: number;
}

/** One floor run; absolute times (ms). */
export interface FloorTimes {
  /** First statement sent. */
  t0: number;
  /** CREATE DATABASE, CREATE USER, GRANT returned. */
  statements: number;
  login: number;
  attempts: number;
}

export type Request =
  | { seq: number; op: 'init'; settings: ClientSettings }
  | { seq: number; op: 'clock' }
  | { seq: number; op: 'floor'; name: string; password: string }
  | { seq: number; op: 'product'; req: ProductRequest }
  | { seq: number; op: 'close' };

export type Reply = { seq: number; ok: true; value: unknown } | { seq: number; ok: false; error: string };

/** Absolute time in ms, comparable between processes on this machine. */
export const now = () => performance.timeOrigin + performance.now();

/** A refusal of the credentials or of the database: the change is not there yet. */
const NOT_YET = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR']);

let settings: ClientSettings | null = null;
let admin: mysql.Connection | null = null;
let interrupted = false;

const must = () => {
  if (!settings) throw new Error('client not initialised');
  return settings;
};

/**
 * Logs in as `user` into database `user` until it works: each attempt a new connection, the next
 * one at once after a refusal (pollMs 0) or pollMs after the previous one began; at most
 * maxAttempts attempts and limitMs. Resolves with the time the connection was established.
 */
async function firstLogin(user: string, password: string): Promise<{ at: number; attempts: number }> {
  const s = must();
  const url = new URL(s.mariadbUrl);
  const end = now() + s.limitMs;
  for (let attempts = 1; ; attempts++) {
    const started = performance.now();
    try {
      const conn = await mysql.createConnection({ host: url.hostname, port: Number(url.port || 3306), user, password, database: user, connectTimeout: 5_000 });
      const at = now();
      await conn.end();
      return { at, attempts };
    } catch (err) {
      const code = String((err as { code?: string }).code);
      if (!NOT_YET.has(code)) throw err;
      if (attempts >= s.maxAttempts) throw new Error(`no login as ${user} after ${attempts} attempts (last: ${code})`);
      if (now() > end) throw new Error(`no login as ${user} within ${s.limitMs} ms (last: ${code})`);
    }
    if (interrupted) throw new Error('interrupted');
    if (s.pollMs > 0) await sleep(Math.max(0, started + s.pollMs - performance.now()));
  }
}

/** The bare statements on the admin connection for a new name, then the first login: as an operator would by hand. */
async function floor(name: string, password: string): Promise<FloorTimes> {
  const conn = (admin ??= await mysql.createConnection({ uri: must().mariadbUrl }));
  const t0 = now();
  await conn.query(`CREATE DATABASE ${mysql.escapeId(name)}`);
  await conn.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [name, password]);
  await conn.query(`GRANT ALL ON ${mysql.escapeId(name.replace(/_/g, '\\_'))}.* TO ?@'%'`, [name]);
  const statements = now();
  const login = await firstLogin(name, password);
  return { t0, statements, login: login.at, attempts: login.attempts };
}

/** One kept-alive connection, as an API client that sends more than one request holds it. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  contentLocation: string | null;
  body: { data?: { attributes: { username: string; password: string } } };
}

/** POST `body` (JSON) to `url` with node:http and read the JSON answer. */
function httpPost(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        try {
          const location = res.headers['content-location'];
          resolve({ status: res.statusCode ?? 0, contentLocation: typeof location === 'string' ? location : null, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function fetchPost(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, contentLocation: res.headers.get('content-location'), body: (await res.json()) as Answer['body'] };
}

/** POST /databases, the first login with its password, then (untimed) the job until it is done. */
async function product(r: ProductRequest): Promise<ProductTimes> {
  const s = must();
  const headers = { authorization: `token ${r.token}`, accept: ACCEPT };
  const body = JSON.stringify({ data: { type: 'database', attributes: { package_id: r.packageId, db_type: 'mariadb', version: r.version } } });
  const send = s.httpClient === 'fetch' ? fetchPost : httpPost;
  const wall0 = Date.now();
  const t0 = now();
  const res = await send(`${r.base}/databases`, { ...headers, 'content-type': JSONAPI }, body);
  const post = now();
  if (res.status !== 202 || !res.body.data) throw new Error(`POST /databases: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const { username, password } = res.body.data.attributes;
  const login = await firstLogin(username, password);
  // The job (its check of the change) has to finish before the next run starts.
  const jobUrl = String(res.contentLocation).replace(s.publicBaseUrl, r.base);
  const finishedAt = await jobFinishedAt(jobUrl, headers, {
    limitMs: s.limitMs,
    pollMs: s.jobPollMs,
    check: () => {
      if (interrupted) throw new Error('interrupted');
    },
  });
  return { t0, wall0, post, login: login.at, attempts: login.attempts, username, finishedAt };
}

async function handle(m: Request): Promise<unknown> {
  switch (m.op) {
    case 'init':
      settings = m.settings;
      return null;
    case 'clock':
      return now();
    case 'floor':
      return floor(m.name, m.password);
    case 'product':
      return product(m.req);
    case 'close':
      await admin?.end().catch(() => {});
      admin = null;
      return null;
  }
}

// Only when started as the client (the bench imports this file for its types and `now`).
if (process.send && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Ctrl-C reaches the whole process group: the bench decides when to stop; a login loop ends early.
  process.on('SIGINT', () => (interrupted = true));
  process.on('SIGTERM', () => (interrupted = true));
  // The bench gone (ended or killed): nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (m: Request) => {
    handle(m).then(
      (value) => process.send!({ seq: m.seq, ok: true, value } satisfies Reply),
      (err: unknown) => process.send!({ seq: m.seq, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies Reply),
    );
  });
}
