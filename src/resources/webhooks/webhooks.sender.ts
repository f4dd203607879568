// One delivery over HTTP (API guide "Webhooks"; docs/decisions/0027-webhooks.md): the receiver's
// name is resolved, every address it has is judged (webhooks.addresses.ts), and the request goes to
// the address that was judged — the connection never resolves the name again, so a DNS answer that
// changes in between (rebinding) cannot lead it elsewhere; TLS still checks the certificate against
// the URL's name (SNI and Host stay the name). Redirects are not followed, the whole attempt has a
// time limit, and only a bounded part of the answer is read.
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { shortError } from '../../queue/short-error.js';
import { judgeAddress, type AddressPolicy } from './webhooks.addresses.js';
import { literalAddress } from './webhooks.rules.js';

/** What is read of a receiver's answer at most; the rest is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** How a receiver's name becomes its addresses: `await resolve('hooks.example.net')` → `[{ address: '203.0.113.9', family: 4 }]`. */
export type ResolveName = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, then the host's DNS servers), every address it has. */
export const systemResolver: ResolveName = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  policy: AddressPolicy;
  timeoutMs: number;
  /** Asked once per attempt; the connection only goes to the address it answered and was judged. */
  resolve: ResolveName;
}

/** An attempt's result: the receiver's status (null when it did not answer) and, unless it answered 2xx, why it failed. */
export interface SendResult {
  responseStatus: number | null;
  error: string | null;
}

class Refused extends Error {}

/** The addresses `host` has, each judged; throws Refused naming the first that no webhook may reach. */
async function checkedAddress(url: URL, policy: AddressPolicy, resolve: ResolveName): Promise<{ address: string; family: number }> {
  const literal = literalAddress(url.hostname);
  const found = literal ? [{ address: literal, family: net.isIP(literal) }] : await resolve(url.hostname);
  if (!found.length) throw new Refused(`${url.hostname} has no address`);
  for (const a of found) {
    const verdict = judgeAddress(a.address, policy);
    const named = literal ? a.address : `${url.hostname} resolves to ${a.address}, which`;
    if (!verdict.ok) throw new Refused(`${named} is ${verdict.reason}: webhooks are not sent there`);
    if (url.protocol === 'http:' && !verdict.allowed) throw new Refused(`${named} is not in WEBHOOK_ALLOW_CIDRS: plain http:// is only sent there`);
  }
  return found[0];
}

/** A lookup that answers the judged address whatever it is asked (net.connect asks with `all` on Node 20+). */
const fixedLookup = (address: string, family: number): LookupFunction =>
  ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;

/**
 * POSTs `d.body` to `d.url` and reports how it went; never throws.
 * `await send({ url, headers, body, policy, timeoutMs: 10_000, resolve: systemResolver })` → `{ responseStatus: 204, error: null }`.
 */
export async function send(d: Delivery): Promise<SendResult> {
  const url = new URL(d.url);
  let timer: NodeJS.Timeout | undefined;
  let request: http.ClientRequest | undefined;
  let over = false;
  const timeout = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => {
      over = true;
      request?.destroy();
      resolve({ responseStatus: null, error: `no answer within ${d.timeoutMs / 1000} s` });
    }, d.timeoutMs);
  });
  const attempt = (async (): Promise<SendResult> => {
    const { address, family } = await checkedAddress(url, d.policy, d.resolve);
    // A lookup that outlasted the time limit must not send after the attempt was given up.
    if (over) throw new Error('timed out');
    return new Promise<SendResult>((resolve, reject) => {
      const options: https.RequestOptions = {
        method: 'POST',
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: { ...d.headers, host: url.host, 'content-length': String(Buffer.byteLength(d.body)) },
        agent: false,
        lookup: fixedLookup(address, family),
      };
      request = (url.protocol === 'https:' ? https : http).request(options, (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        const done = () => resolve({ responseStatus: status, error: status >= 200 && status < 300 ? null : answerError(status) });
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('error', done);
      });
      request.on('error', reject);
      request.end(d.body);
    });
  })().catch((err: unknown): SendResult => ({ responseStatus: null, error: err instanceof Refused ? err.message : `could not deliver: ${shortError(err)}` }));
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function answerError(status: number): string {
  if (status >= 300 && status < 400) return `answered ${status}: redirects are not followed`;
  return `answered ${status}`;
}
