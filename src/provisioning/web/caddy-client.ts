// Caddy's admin API as the web worker uses it (docs/decisions/0008-web-servers.md
// "Caddy: the whole desired state, pushed and re-pushed"): read what Caddy runs, load the whole
// desired config only when it differs (Caddy re-provisions everything on each change), and let a
// burst of jobs share one load. A Caddy that restarted without its config reports something else
// and is loaded again on the next call.
//
// node:http with a fresh connection per request: loading a config restarts Caddy's admin
// endpoint, and a kept-alive connection to the old one would fail the next request. Even a fresh
// connection can land in the old listener's queue as it closes (reset, or refused for a moment):
// such a request, which got no answer at all, is tried again. Both requests are safe to repeat (a
// read, and a load of the whole config, which Caddy skips when it is unchanged).
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** Waits before the tries after a connection that gave no answer (see above). */
const RETRY_DELAYS_MS = [25, 100, 250];
const NO_ANSWER = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

export interface CaddyClientOptions {
  /** Per admin request (default 30 000 ms: a load re-provisions every site). */
  timeoutMs?: number;
}

/** Structural equality of parsed JSON; object keys in any order, arrays in order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && sameJson(ao[k], bo[k]));
}

interface Waiter {
  resolve: (loaded: boolean) => void;
  reject: (err: unknown) => void;
}

export class CaddyClient {
  private readonly base: URL;
  private readonly timeoutMs: number;
  /** The batch waiting for the running one to end: only its last desired config is applied. */
  private pending: { make: () => Promise<string>; waiters: Waiter[] } | null = null;
  private running = false;

  /** `new CaddyClient('http://127.0.0.1:2019')`. */
  constructor(adminUrl: string, opts: CaddyClientOptions = {}) {
    this.base = new URL(adminUrl);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** GET /config/ (null config → null). */
  async current(): Promise<unknown> {
    const { status, body } = await this.request('GET', '/config/');
    if (status !== 200) throw new Error(`Caddy at ${this.base.origin} answered GET /config/ with ${status}: ${caddyMessage(body)}`);
    try {
      return JSON.parse(body);
    } catch {
      throw new Error(`Caddy at ${this.base.origin} answered GET /config/ with something that is not JSON: ${body.slice(0, 200)}`);
    }
  }

  /**
   * Makes Caddy's config `desired`: GET /config/, POST /load only when different (deep compare,
   * order-insensitive for object keys). Concurrent calls coalesce: while a load runs, later
   * calls wait and only the LAST desired config is loaded afterwards (one load for a burst).
   * `desired` may be a function that builds the config: it is called once per batch, when the
   * batch runs, so a burst of callers costs one build (each caller's change must be readable by
   * then, e.g. committed). Returns true when it loaded. Throws a clear Error (status + Caddy's
   * message) when Caddy refuses. Every caller of a batch gets that batch's outcome (its error too).
   */
  ensure(desired: object | (() => Promise<object>)): Promise<boolean> {
    // An object is serialized now: a caller changing it afterwards changes nothing here.
    const body = typeof desired === 'function' ? null : JSON.stringify(desired);
    const make = body === null ? async () => JSON.stringify(await (desired as () => Promise<object>)()) : async () => body;
    return new Promise<boolean>((resolve, reject) => {
      if (this.pending) this.pending.make = make;
      else this.pending = { make, waiters: [] };
      this.pending.waiters.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending) {
        const batch = this.pending;
        this.pending = null;
        try {
          const loaded = await this.apply(await batch.make());
          for (const w of batch.waiters) w.resolve(loaded);
        } catch (err) {
          for (const w of batch.waiters) w.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async apply(body: string): Promise<boolean> {
    if (sameJson(await this.current(), JSON.parse(body))) return false;
    const res = await this.request('POST', '/load', body);
    if (res.status < 200 || res.status > 299) {
      throw new Error(`Caddy at ${this.base.origin} refused the configuration (HTTP ${res.status}): ${caddyMessage(res.body)}`);
    }
    return true;
  }

  private async request(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: string }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce(method, path, body);
      } catch (err) {
        const code = (err as { cause?: { code?: string } }).cause?.code;
        if (attempt >= RETRY_DELAYS_MS.length || !NO_ANSWER.has(code ?? '')) throw err;
        await sleep(RETRY_DELAYS_MS[attempt]);
      }
    }
  }

  private requestOnce(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: string }> {
    const what = `${method} ${this.base.origin}${path}`;
    let answered = false;
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          protocol: this.base.protocol,
          hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
          port: this.base.port || 80,
          path,
          method,
          agent: false,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
          timeout: this.timeoutMs,
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          // An answer that breaks off is not retried: it came from a Caddy that got the request.
          res.on('error', (err) => reject(new Error(`Caddy admin API: ${what} failed: ${err.message}`)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      // Only an error before any answer carries its cause: that is what request() tries again.
      req.on('error', (err) => reject(new Error(`Caddy admin API: ${what} failed: ${err.message}`, answered ? undefined : { cause: err })));
      req.end(body);
    });
  }
}

/** Caddy's `{"error":"…"}`, or the body as it came. */
function caddyMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed?.error === 'string') return parsed.error;
  } catch {
    // not JSON: the text itself
  }
  return body.trim().slice(0, 2000) || '(no message)';
}
