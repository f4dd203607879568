// Content negotiation: the Accept version (spec §9, API-NOTES §2) and the response content type (§5.7).

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

/**
 * Decides whether `accept` can be served and in which content type; null means 406.
 * `negotiate('application/vnd.hostplane.v1+json', undefined, 'hostplane')` → `{ jsonApi: true }`.
 */
export function negotiate(accept: string | undefined, contentType: string | undefined, vendor: string): Negotiated | null {
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  let jsonApi = ct === 'application/vnd.api+json' || VENDOR_TYPE.test(ct);
  if (accept === undefined || accept.trim() === '') return { jsonApi };
  const ranges = parseAccept(accept);
  let acceptable = false;
  for (const { type } of ranges) {
    const v = VENDOR_TYPE.exec(type);
    if (v) {
      if (v[1] === vendor && v[2] === '1') {
        acceptable = true;
        jsonApi = true;
      }
    } else if (type === 'application/vnd.api+json') {
      acceptable = true;
      jsonApi = true;
    } else if (type === 'application/json' || type === 'application/*' || type === '*/*') {
      acceptable = true;
    }
  }
  return acceptable ? { jsonApi } : null;
}
