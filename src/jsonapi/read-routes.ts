// The read side every resource has (API guide "Filters and paging", "Endpoints"): `GET /<segment>`
// with filters and paging, and `GET /<segment>/:<key>` for one object, answered in the same
// document layout, the one object with its ETag (API guide "Safe retries").
import type { FastifyRequest } from 'fastify';
import type { TObject } from 'typebox';
import type { ErrorCode } from '../errors.js';
import type { PageResult } from '../db/paging.js';
import type { LinkBuilder, ResourceObject } from './document.js';
import { parseListQuery, type ListQuery } from './query.js';
import { listDocument } from './respond.js';
import { sendTagged } from './conditional.js';
import { EXTENSION, IdParam, ListQueryString, addDocumentSchemas, operation, type ResourceSchemas } from './schema.js';
import type { TypedApp } from './typed-app.js';
import type { TokenRead } from '../auth/plugin.js';

export interface ReadRoutes<R> {
  /** The URL segment and OpenAPI tag, e.g. `packages`. */
  segment: string;
  /** The filter names `GET /<segment>` accepts (`filter[<name>]`). */
  filters: readonly string[];
  /** The resource's documents (OpenAPI components); their name gives the operation ids: `listPackages`, `getPackage`. */
  schemas: ResourceSchemas;
  /** OpenAPI summaries of the list and of the one-object route. */
  summaries: { list: string; one: string };
  /** The path parameter of one object: `id` (IdParam) unless given, e.g. `{ name: 'name', schema: DomainNameParam }`. */
  key?: { name: string; schema: TObject };
  /** Failures of `GET /<segment>/:<key>` beyond "not found", by error id: `{ invalid_api_data: 'the name is not ACE-encodable' }`. */
  oneErrors?: Partial<Record<ErrorCode, string>>;
  list(request: FastifyRequest, q: ListQuery): Promise<PageResult<R>>;
  get(request: FastifyRequest, key: string): Promise<R>;
  toResource(row: R): ResourceObject;
  /** Reads that check the token in their own statement (src/auth/plugin.ts TokenRead), per route. */
  tokenReads?: { list?: TokenRead; one?: TokenRead };
  /** Both routes are additions to the original API (marked `x-hostplane-extension` in OpenAPI). */
  extension?: boolean;
  /** A list that grows without bound is paged even without `page[…]`: this many per page. */
  defaultPageSize?: number;
}

/** `dns-records` → `DnsRecords`: the plural in operation ids. */
const pascal = (segment: string) => segment.replace(/(^|-)([a-z])/g, (_, _dash, c: string) => c.toUpperCase());

/**
 * Registers both read routes:
 * `readRoutes(app, links, { segment: 'plans', filters: PLAN_FILTERS, schemas: PlanSchemas, summaries: { list: 'List plans', one: 'One plan' },
 *   list: (request, q) => service.list(actorOf(request), q.page), get: (request, id) => service.get(actorOf(request), id),
 *   toResource: (row) => planResource(row, links) })`.
 */
export function readRoutes<R>(app: TypedApp, links: LinkBuilder, o: ReadRoutes<R>): void {
  const key = o.key ?? { name: 'id', schema: IdParam };
  const { schemas } = o;
  const tags: [string] = [o.segment];
  const marks = o.extension ? EXTENSION : {};
  addDocumentSchemas(app, schemas.resource, schemas.document, schemas.list);

  const listSchema = operation('GET', {
    operationId: `list${pascal(o.segment)}`,
    ...marks,
    tags,
    summary: o.summaries.list,
    querystring: ListQueryString(o.filters),
    success: { status: 200, document: schemas.list, description: `The ${schemas.type} objects you may see (one page of them when paged)` },
  });
  app.get(`/${o.segment}`, { schema: listSchema, config: { tokenRead: o.tokenReads?.list } }, async (request) => {
    const parsed = parseListQuery(request.query, o.filters);
    const q = parsed.page || !o.defaultPageSize ? parsed : { ...parsed, page: { number: 1, size: o.defaultPageSize } };
    return listDocument(request, links, q, await o.list(request, q), o.toResource);
  });

  const oneSchema = operation('GET', {
    operationId: `get${schemas.name}`,
    ...marks,
    tags,
    summary: o.summaries.one,
    params: key.schema,
    conditional: 'read',
    success: { status: 200, document: schemas.document, description: `The ${schemas.type}` },
    errors: { resource_not_found: `no such ${schemas.type} among those you may see`, ...o.oneErrors },
  });
  // With its ETag; If-None-Match naming it answers 304 (API guide "Safe retries").
  app.get(`/${o.segment}/:${key.name}`, { schema: oneSchema, config: { tokenRead: o.tokenReads?.one } }, async (request, reply) => {
    const value = (request.params as Record<string, string>)[key.name];
    return sendTagged(request, reply, links, o.toResource(await o.get(request, value)), { conditional: true });
  });
}
