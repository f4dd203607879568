// A small client of Dovecot's doveadm HTTP API (docs/decisions/0009-mail-directory.md): POST
// /doveadm/v1 `[["command",{params},"tag"]]`, each answered `doveadmResponse` or `error` in one
// HTTP 200. Dovecot 2.3 serves no `auth lookup`/`auth test` over HTTP, and `user` with
// `userdbOnly` crashes its doveadm server: callers use `user` without it. The key never appears in
// an error or message. node:http(s) rather than fetch: an https:// doveadm may need roots of its
// own (`ca`: a node's system roots, where a private ACME CA's is), which fetch cannot be given.
import http from 'node:http';
import https from 'node:https';

/** sysexits.h codes doveadm answers in `["error",{"type":"exitCode","exitCode":N}]`. */
export const EX_NOUSER = 67; // the userdb does not know the user
export const EX_NOINPUT = 68; // no such file / nothing matched (fsStat, kick)
export const EX_TEMPFAIL = 75; // a temporary failure (fsDelete of a missing path too)

/** doveadm could not be asked, refused the key, or answered something this client does not understand. */
export class DoveadmError extends Error {
  constructor(
    message: string,
    /** The HTTP status when doveadm answered one other than 200. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DoveadmError';
  }
}

/** One command's outcome: its data, or the exit code doveadm gave it. */
export type DoveadmResult = { ok: true; data: unknown } | { ok: false; exitCode: number; type: string };

export interface DoveadmCommand {
  command: string;
  parameters: Record<string, unknown>;
}

export interface DoveadmClientOptions {
  /** Per HTTP request (default 15 000 ms). */
  timeoutMs?: number;
  /** PEM certificates an https:// doveadm's certificate must chain to, instead of Node's own list. */
  ca?: string;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * `const doveadm = new DoveadmClient('http://127.0.0.1:8080', key)`;
 * `await doveadm.run('quotaGet', { user: 'a@example.com' })` → `{ ok: true, data: [{ type: 'STORAGE', … }] }`.
 */
export class DoveadmClient {
  private readonly endpoint: string;
  private readonly origin: string;
  private readonly authorization: string;
  private readonly timeoutMs: number;
  private readonly secrets: string[];
  private readonly agent: https.Agent | undefined;

  constructor(url: string, key: string, opts: DoveadmClientOptions = {}) {
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      throw new DoveadmError(`"${url}" is not a URL of a doveadm HTTP API (e.g. http://127.0.0.1:8080).`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new DoveadmError(`"${url}" is not a URL of a doveadm HTTP API: it must start with http:// or https://.`);
    }
    this.origin = base.origin;
    this.endpoint = `${base.origin}${base.pathname.replace(/\/+$/, '')}/doveadm/v1`;
    const b64 = Buffer.from(key, 'utf8').toString('base64');
    this.authorization = `X-Dovecot-API ${b64}`;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.secrets = [key, b64].filter((s) => s.length >= 4);
    // As Node's global agents: connections kept for the next command a few seconds, then closed.
    this.agent = opts.ca === undefined ? undefined : new https.Agent({ ca: opts.ca, keepAlive: true, timeout: 5000 });
  }

  /** One command: `await doveadm.run('user', { userMask: ['a@example.com'], field: 'home' })`. */
  async run(command: string, parameters: Record<string, unknown>): Promise<DoveadmResult> {
    return (await this.batch([{ command, parameters }]))[0];
  }

  /** Several commands in one request, answered in order (one result per command). */
  async batch(commands: DoveadmCommand[]): Promise<DoveadmResult[]> {
    if (!commands.length) return [];
    const body = JSON.stringify(commands.map((c, i) => [c.command, c.parameters, `c${i}`]));
    const text = await this.request('POST', body);
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new DoveadmError(`doveadm at ${this.origin} answered something that is not JSON: ${this.excerpt(text)}`);
    }
    if (!Array.isArray(answer)) throw new DoveadmError(`doveadm at ${this.origin} answered something unexpected: ${this.excerpt(text)}`);
    const byTag = new Map<string, DoveadmResult>();
    for (const entry of answer) {
      if (!Array.isArray(entry) || entry.length < 3 || typeof entry[2] !== 'string') continue;
      const [kind, data, tag] = entry as [unknown, unknown, string];
      if (kind === 'doveadmResponse') byTag.set(tag, { ok: true, data });
      else if (kind === 'error') {
        const e = (data ?? {}) as { type?: unknown; exitCode?: unknown };
        byTag.set(tag, { ok: false, type: String(e.type ?? 'unknown'), exitCode: Number(e.exitCode ?? 0) });
      }
    }
    return commands.map((c, i) => {
      const r = byTag.get(`c${i}`);
      if (!r) throw new DoveadmError(`doveadm at ${this.origin} did not answer ${c.command}: ${this.excerpt(text)}`);
      // A command or parameter this doveadm does not know is a bug or a wrong version, never an answer.
      if (!r.ok && r.type !== 'exitCode') {
        throw new DoveadmError(`doveadm at ${this.origin} refused ${c.command} (${r.type}); is it Dovecot 2.3 with the HTTP API?`);
      }
      return r;
    });
  }

  /** The commands this doveadm offers over HTTP (GET /doveadm/v1): a harmless call that checks URL and key. */
  async commands(): Promise<string[]> {
    const text = await this.request('GET');
    try {
      const list = JSON.parse(text) as Array<{ command?: unknown }>;
      if (Array.isArray(list)) return list.map((c) => String(c.command));
    } catch {
      // answered below
    }
    throw new DoveadmError(`${this.origin} answered GET /doveadm/v1 with something that is not doveadm's command list: ${this.excerpt(text)}`);
  }

  private async request(method: 'GET' | 'POST', body?: string): Promise<string> {
    const { status, text } = await this.exchange(method, body);
    if (status === 401 || status === 403) {
      throw new DoveadmError(`doveadm at ${this.origin} refused the API key (HTTP ${status}).`, status);
    }
    if (status !== 200) {
      throw new DoveadmError(`doveadm at ${this.origin} answered HTTP ${status}: ${this.excerpt(text)}`, status);
    }
    return text;
  }

  /** One HTTP request and its whole answer within timeoutMs; a failure names whether the answer had begun. */
  private exchange(method: 'GET' | 'POST', body?: string): Promise<{ status: number; text: string }> {
    const url = new URL(this.endpoint);
    const headers: Record<string, string> = { authorization: this.authorization };
    if (body !== undefined) headers['content-type'] = 'application/json'; // Node sends its length (end(body))
    return new Promise((resolve, reject) => {
      let answering = false;
      let timedOut = false;
      let req: http.ClientRequest | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        req?.destroy(new Error('timeout'));
      }, this.timeoutMs);
      const fail = (e: unknown) => {
        clearTimeout(timer);
        const why = timedOut ? `no answer within ${this.timeoutMs / 1000} s` : this.scrub(reason(e));
        reject(new DoveadmError(`doveadm at ${this.origin} did not answer${answering ? ' in full' : ''}: ${why}`));
      };
      const secure = url.protocol === 'https:';
      try {
        req = (secure ? https.request : http.request)(url, { method, headers, ...(secure && this.agent ? { agent: this.agent } : {}) }, (res) => {
          answering = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('end', () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
        });
      } catch (e) {
        return fail(e);
      }
      req.on('error', fail);
      req.end(body);
    });
  }

  private excerpt(text: string): string {
    const t = this.scrub(text.trim());
    return t ? (t.length > 200 ? `${t.slice(0, 200)}…` : t) : '(nothing)';
  }

  private scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }
}

/** What went wrong with a request, as a person reads it: `connect ECONNREFUSED 127.0.0.1:8080`. */
function reason(e: unknown): string {
  const err = e as { message?: string };
  return err?.message || String(e);
}
