// JSON:API documents in the byte layout existing clients parse (API guide "Compatibility with
// existing clients", "Documents"). Key order is insertion order: single documents put `data` first,
// lists put `links` first.

export type LinkValue = string | null;

export interface Relationship {
  data?: { type: string; id: string } | null;
  links?: { related: string };
}

export interface ResourceObject {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  relationships?: Record<string, Relationship>;
  links: Record<string, LinkValue>;
}

/**
 * The path-and-query of a request target: an absolute-form target (`http://host/path`, proxies
 * send it) or `*` becomes `/path` or `/`, so links never embed a client-chosen host.
 */
export function originForm(rawUrl: string): string {
  if (rawUrl.startsWith('/')) return rawUrl;
  const path = rawUrl.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return path.startsWith('/') ? path : '/' + path.replace(/^\*/, '');
}

/** Builds absolute URLs from the configured public base; `links.to('/domains/', name)` encodes `name`. */
export class LinkBuilder {
  constructor(readonly base: string) {}
  /** `to('/customers/', '10001')` → `<base>/customers/10001` (the id is percent-encoded). */
  to(path: string, id?: string): string {
    return id === undefined ? this.base + path : this.base + path + encodeURIComponent(id);
  }
  /**
   * The URL of the current request exactly as the client sent it (raw brackets kept, API guide
   * "Compatibility with existing clients").
   */
  request(rawUrl: string): string {
    return this.base + originForm(rawUrl);
  }
}

export const ref = (type: string, id: string | number | null | undefined): Relationship => ({
  data: id === null || id === undefined ? null : { type, id: String(id) },
});

export function single(data: ResourceObject, selfUrl: string) {
  return { data, links: { self: selfUrl } };
}

export interface PageInfo {
  number: number;
  size: number;
  total: number;
}

/** A list document: `links` first, then `data`, then `meta` (acme.sh cuts it apart by brackets). */
export function list(data: ResourceObject[], selfUrl: string, total: number, paging?: { page: PageInfo; linkTo: (n: number) => string }) {
  if (!paging) return { links: { self: selfUrl }, data, meta: { total } };
  const { page, linkTo } = paging;
  const totalPages = Math.max(1, Math.ceil(total / page.size));
  return {
    links: {
      self: selfUrl,
      first: linkTo(1),
      last: linkTo(totalPages),
      prev: page.number > 1 ? linkTo(Math.min(page.number - 1, totalPages)) : null,
      next: page.number < totalPages ? linkTo(page.number + 1) : null,
    },
    data,
    meta: { total, page: { number: page.number, size: page.size, total_pages: totalPages } },
  };
}
