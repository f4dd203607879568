// Content negotiation (API guide "Versioning and content types"): the Accept version and the
// response content type.

export interface Negotiated {
  /** true when the response is `application/vnd.api+json`, false for `application/json`. */
  jsonApi: boolean;
}

interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  return header
    .split(',')
    .map((part) => {
      const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
      let q = 1;
      for (const p of params) {
        const m = /^q=([0-9.]+)$/.exec(p);
        if (m) q = Number(m[1]);
      }
      return { type, q: Number.isFinite(q) ? q : 0 };
    })
    .filter((r) => r.type !== '' && r.q > 0);
}

const VENDOR_TYPE = /^application\/vnd\.([a-z0-9-]+)\.v([0-9]+)\+json$/;
const JSON_API = 'application/vnd.api+json';

const mediaType = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase();
const isJsonApiType = (type: string) => type === JSON_API || VENDOR_TYPE.test(type);

/**
 * Whether the response is `application/vnd.api+json`: the request's Content-Type or Accept named a
 * JSON:API or vendor type (API guide "Versioning and content types"), whatever version or vendor,
 * so that error documents, a 406 included, follow the same rule as successes. Ranges with q=0 name
 * nothing. `namesJsonApi('application/vnd.hostplane.v2+json', undefined)` → true.
 */
export function namesJsonApi(accept: string | undefined, contentType: string | undefined): boolean {
  if (isJsonApiType(mediaType(contentType))) return true;
  if (accept === undefined) return false;
  return parseAccept(accept).some((r) => isJsonApiType(r.type));
}

const NEGOTIATED_MAX = 500;
const negotiated = new Map<string, Negotiated | null>();

/**
 * Decides whether `accept` can be served and in which content type; null means 406.
 * `negotiate('application/vnd.hostplane.v1+json', undefined, 'hostplane')` → `{ jsonApi: true }`.
 */
export function negotiate(accept: string | undefined, contentType: string | undefined, vendor: string): Negotiated | null {
  // Remembered per header pair: a client sends the same headers on every request, and parsing them
  // is a measurable part of a small read (docs/decisions/0012-request-path.md). Long or many
  // distinct values (a client that varies them on purpose) only start the memo over.
  const key = `${vendor}\n${accept ?? '\u0000'}\n${contentType ?? '\u0000'}`;
  const known = negotiated.get(key);
  if (known !== undefined) return known;
  const n = decide(accept, contentType, vendor);
  if (key.length <= 512) {
    if (negotiated.size >= NEGOTIATED_MAX) negotiated.clear();
    negotiated.set(key, n);
  }
  return n;
}

function decide(accept: string | undefined, contentType: string | undefined, vendor: string): Negotiated | null {
  const jsonApi = namesJsonApi(accept, contentType);
  if (accept === undefined || accept.trim() === '') return Object.freeze({ jsonApi });
  let acceptable = false;
  for (const { type } of parseAccept(accept)) {
    const v = VENDOR_TYPE.exec(type);
    // Our vendor's v1 is the only versioned type; any other version or vendor is not served (406).
    if (v) acceptable ||= v[1] === vendor && v[2] === '1';
    else acceptable ||= type === JSON_API || type === 'application/json' || type === 'application/*' || type === '*/*';
  }
  return acceptable ? Object.freeze({ jsonApi }) : null;
}
