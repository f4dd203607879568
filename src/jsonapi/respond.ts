// Builds the documents route handlers return, so every resource answers in the same layout.
import type { FastifyRequest } from 'fastify';
import { list, originForm, single, type LinkBuilder, type ResourceObject } from './document.js';
import { pageQuery, type ListQuery } from './query.js';

/**
 * A list document for `rows` of one page (API guide "Filters and paging"), links from the raw
 * request URL.
 */
export function listDocument<R>(
  request: FastifyRequest,
  links: LinkBuilder,
  q: ListQuery,
  result: { rows: R[]; total: number },
  toResource: (row: R) => ResourceObject,
) {
  const self = links.request(request.url);
  const data = result.rows.map(toResource);
  if (!q.page) return list(data, self, result.total);
  const path = originForm(request.url).split('?')[0];
  const query = request.query as Record<string, unknown>;
  return list(data, self, result.total, {
    page: { ...q.page, total: result.total },
    linkTo: (n) => links.to(path + pageQuery(query, n, q.page!.size)),
  });
}

/** A single-resource document: `data` first, then `links.self` of the request. */
export function resourceDocument(request: FastifyRequest, links: LinkBuilder, data: ResourceObject) {
  return single(data, links.request(request.url));
}
