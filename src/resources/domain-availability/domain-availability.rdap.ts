// RDAP client of the availability check (API guide "Domain availability"): asks the registry's RDAP
// server (RFC 9082 `GET <base>/domain/<name>`) whether a domain exists. 404 means nobody holds
// it, an RDAP domain object means it is registered; anything else is "don't know" (`null`).
import type { Config } from '../../config.js';

/** One answer; `reason` goes to the client, `problem` only to the log (it may carry internals). */
export interface RdapAnswer {
  available: boolean | null;
  reason: string;
  problem?: string;
}

// Reasons are part of the API: clients show or match them, so the wording stays stable.
export const RDAP_REASONS = {
  notFound: 'Not registered.',
  found: 'Registered.',
  noServer: (tld: string) => `No RDAP server configured for .${tld}.`,
  timeout: (ms: number) => `The RDAP lookup timed out after ${ms} ms.`,
  status: (status: number) => `The RDAP server answered with HTTP status ${status}.`,
  notRdap: 'The RDAP server answered without an RDAP domain object.',
  unreachable: 'The RDAP server could not be reached.',
} as const;

export class RdapClient {
  constructor(private readonly settings: Config['rdap']) {}

  get timeoutMs(): number {
    return this.settings.timeoutMs;
  }

  /** The base URL for the TLD of an ACE name, else the `*` fallback, else null. */
  serverFor(ace: string): string | null {
    const tld = ace.slice(ace.lastIndexOf('.') + 1);
    return this.settings.servers[tld] ?? this.settings.servers['*'] ?? null;
  }

  /**
   * Looks up one ACE name; never throws. `signal` bounds the whole lookup including the body, so
   * callers share one `AbortSignal.timeout` across parallel lookups to bound a whole request:
   * `await rdap.lookup('example.com', AbortSignal.timeout(rdap.timeoutMs))`.
   */
  async lookup(ace: string, signal: AbortSignal): Promise<RdapAnswer> {
    const base = this.serverFor(ace);
    if (base === null) return { available: null, reason: RDAP_REASONS.noServer(ace.slice(ace.lastIndexOf('.') + 1)) };
    try {
      const res = await fetch(`${base}/domain/${ace}`, {
        headers: { accept: 'application/rdap+json, application/json;q=0.9' },
        signal,
        // Bootstrap services (rdap.org) redirect to the registry's server.
        redirect: 'follow',
      });
      if (res.status === 404) {
        await res.body?.cancel();
        return { available: true, reason: RDAP_REASONS.notFound };
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        return { available: null, reason: RDAP_REASONS.status(res.status), problem: `HTTP ${res.status} from ${base}` };
      }
      // A 200 that is not an RDAP domain (a captive portal, a wrong base URL answering HTML)
      // must not turn into "registered".
      let body: unknown;
      try {
        body = JSON.parse(await res.text());
      } catch (e) {
        if (isAbort(e)) throw e;
        body = null;
      }
      if ((body as { objectClassName?: unknown } | null)?.objectClassName !== 'domain') {
        return { available: null, reason: RDAP_REASONS.notRdap, problem: `no RDAP domain object from ${base}` };
      }
      return { available: false, reason: RDAP_REASONS.found };
    } catch (e) {
      if (isAbort(e)) {
        return { available: null, reason: RDAP_REASONS.timeout(this.settings.timeoutMs), problem: `timeout from ${base}` };
      }
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      return { available: null, reason: RDAP_REASONS.unreachable, problem: `${cause?.code ?? cause?.message ?? String(e)} from ${base}` };
    }
  }
}

/** fetch rejects with the signal's reason: a TimeoutError DOMException for AbortSignal.timeout. */
const isAbort = (e: unknown) => {
  const name = (e as { name?: string } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
};
