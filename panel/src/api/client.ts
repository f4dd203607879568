// The panel's one way to the API (docs/decisions/0031-customer-panel.md): same origin, the session
// cookie (credentials 'same-origin'), JSON:API documents, the anti-CSRF header on every write.
// The API checks every rule; this module only carries its answers, errors included, to the page.

export interface ApiErrorObject {
  id: string;
  status: string;
  title?: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string; header?: string };
}

export interface Resource<A = Record<string, unknown>> {
  type: string;
  id: string;
  attributes: A;
  relationships?: Record<string, { data?: { type: string; id: string } | null; links?: Record<string, string> }>;
  links?: Record<string, string | null>;
}

/** A failed request: the API's error objects (or one made up for a network failure). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly errors: ApiErrorObject[]) {
    super(errors.map((e) => e.detail ?? e.title ?? e.id).join('; '));
  }
  has(id: string) {
    return this.errors.some((e) => e.id === id);
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const WRITES = new Set<Method>(['POST', 'PATCH', 'DELETE']);
/** The longest Retry-After a read waits out by itself before the page shows the 429. */
const MAX_RETRY_WAIT_S = 10;

let csrfToken: string | null = null;
let onUnauthorized: () => void = () => {};

/** The session's anti-CSRF token, sent as X-CSRF-Token on writes (API guide "Beyond the original API"). */
export function setCsrfToken(token: string | null) {
  csrfToken = token;
}

/** Called when an API request answers 401 outside /session: the session has ended. */
export function setUnauthorizedHandler(handler: () => void) {
  onUnauthorized = handler;
}

export interface Answer<D> {
  status: number;
  data: D;
  meta?: Record<string, unknown>;
  links?: Record<string, string | null>;
}

/**
 * `api('GET', '/domains', { query: { 'filter[owner_id]': '10002' } })`: the document's `data`, or
 * an ApiError. A read over the rate limit waits for Retry-After once (up to 10 s) and tries again.
 */
export async function api<D = unknown>(
  method: Method,
  path: string,
  opts: { body?: unknown; query?: Record<string, string> } = {},
): Promise<Answer<D>> {
  const url = opts.query ? `${path}?${new URLSearchParams(opts.query)}` : path;
  const headers: Record<string, string> = { Accept: 'application/vnd.api+json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/vnd.api+json';
  if (WRITES.has(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        credentials: 'same-origin',
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
    } catch {
      throw new ApiError(0, [{ id: 'network', status: '0' }]);
    }
    const wait = Number(res.headers.get('Retry-After'));
    if (res.status === 429 && method === 'GET' && attempt === 0 && wait > 0 && wait <= MAX_RETRY_WAIT_S) {
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    const doc = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) {
      if (res.status === 401 && !path.startsWith('/session')) onUnauthorized();
      const errors: ApiErrorObject[] = Array.isArray(doc?.errors) ? doc.errors : [{ id: 'generic', status: String(res.status) }];
      throw new ApiError(res.status, errors);
    }
    return { status: res.status, data: doc?.data as D, meta: doc?.meta, links: doc?.links };
  }
}

/** Lists: every object (the API does not page without page[…]). */
export async function list<A>(path: string, query?: Record<string, string>): Promise<Resource<A>[]> {
  return (await api<Resource<A>[]>('GET', path, { query })).data;
}

/** The last path segment of an absolute link: the id of the object it names. */
export function idFromLink(link: string | null | undefined): string | null {
  if (!link) return null;
  const segment = new URL(link, location.origin).pathname.split('/').filter(Boolean).pop();
  return segment ? decodeURIComponent(segment) : null;
}

/**
 * Errors by the form field their `source.pointer` names (`/data/attributes/ttl` → `ttl`, nested
 * `/data/attributes/presence/dns_update_lock` → `presence.dns_update_lock`); errors of fields the
 * form does not have, and errors without a pointer, go to `form`.
 */
export function errorsByField(err: unknown, fields: readonly string[]): { byField: Record<string, ApiErrorObject[]>; form: ApiErrorObject[] } {
  const byField: Record<string, ApiErrorObject[]> = {};
  const form: ApiErrorObject[] = [];
  const errors = err instanceof ApiError ? err.errors : [{ id: 'generic', status: '0', detail: String(err) }];
  for (const e of errors) {
    const pointer = e.source?.pointer ?? '';
    const field = pointer.startsWith('/data/attributes/') ? pointer.slice('/data/attributes/'.length).split('/').join('.') : null;
    if (field !== null && fields.includes(field)) (byField[field] ??= []).push(e);
    else form.push(e);
  }
  return { byField, form };
}
