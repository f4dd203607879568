// What every PATCH shares (API guide "Documents", "Safe retries"): the body must name the resource
// of the URL, If-Match and If-None-Match are checked on the object in the write's transaction, and
// the answer is the whole resource as the write left it, with its ETag.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject } from 'typebox';
import { AppError, type ErrorCode } from '../errors.js';
import type { LinkBuilder, ResourceObject } from './document.js';
import { resourceDocument } from './respond.js';
import { assertChecked, preconditionOf, sendTagged } from './conditional.js';
import type { Precondition } from '../db/locks.js';
import { EXTENSION, IdParam, operation, type ResourceSchemas } from './schema.js';
import type { TypedApp } from './typed-app.js';

/** Throws 409 `id_mismatch` unless the body names the resource of the URL. */
export function assertUpdateTarget(data: { type: string; id: string }, type: string, urlId: string, same = (a: string, b: string) => a === b) {
  if (data.type !== type) {
    throw new AppError('id_mismatch', `data.type must be "${type}".`, { pointer: '/data/type' });
  }
  if (!same(data.id, urlId)) {
    throw new AppError('id_mismatch', 'data.id must equal the identifier in the URL.', { pointer: '/data/id' });
  }
}

/** A PATCH body: `{"data":{"type":…,"id":…,"attributes":{…}}}` (jsonapi/schema.ts UpdateBody). */
type UpdateBodySchema = TObject<{ data: TObject<{ type: any; id: any; attributes: TObject }> }>;

export interface UpdateRoute<R, B extends UpdateBodySchema> {
  /** The URL segment and OpenAPI tag, e.g. `customers`. */
  segment: string;
  /** The resource's documents; `update<Name>` is the operation id. */
  schemas: ResourceSchemas;
  /** The path parameter: `id` (IdParam) unless given, e.g. `{ name: 'name', schema: DomainNameParam }`. */
  key?: { name: string; schema: TObject };
  body: B;
  summary: string;
  /** Failures beyond "not found" and "id mismatch", by error id (OpenAPI). */
  errors: Partial<Record<ErrorCode, string>>;
  /**
   * How the URL key and `data.id` are compared: by default as equal strings; domains compare
   * names in any spelling: `{ target: (name) => service.requireAce(name), same: sameDomainName }`.
   */
  match?: { target: (key: string) => string; same: (a: string, b: string) => boolean };
  /**
   * Writes and returns the object as this write left it (read in the write's transaction). A
   * `precondition` (If-Match, If-None-Match) goes to the service, which checks it in that
   * transaction on the object as it is before the write (API guide "Safe retries").
   */
  update(request: FastifyRequest, key: string, attributes: Static<B>['data']['attributes'], precondition: Precondition<R> | undefined): Promise<R | Accepted<R>>;
  toResource(row: R): ResourceObject;
  /**
   * For a PATCH that may run as a job: when `update` answers `{ row, job }` with a job, `send`
   * answers 202 (src/resources/accepted.ts); `description` documents it (OpenAPI).
   */
  accepted?: { description: string; send(request: FastifyRequest, reply: FastifyReply, resource: ResourceObject, job: unknown): unknown };
  /** An addition to the original API (marked `x-hostplane-extension` in OpenAPI). */
  extension?: boolean;
}

/** What `update` answers when the route has `accepted`: the object, and the job its change runs as, if any. */
export interface Accepted<R> {
  row: R;
  job: unknown;
}

/**
 * Registers `PATCH /<segment>/:<key>`:
 * `updateRoute(app, links, { segment: 'customers', schemas: CustomerSchemas, body: CustomerUpdateBody, summary: '…',
 *   errors: { conflict: '…' }, update: (request, id, attributes) => service.update(actorOf(request), id, attributes), toResource })`.
 */
export function updateRoute<R, B extends UpdateBodySchema>(app: TypedApp, links: LinkBuilder, o: UpdateRoute<R, B>): void {
  const key = o.key ?? { name: 'id', schema: IdParam };
  const schema = operation('PATCH', {
    operationId: `update${o.schemas.name}`,
    ...(o.extension ? EXTENSION : {}),
    tags: [o.segment],
    summary: o.summary,
    params: key.schema,
    body: o.body,
    conditional: 'write',
    success: { status: 200, document: o.schemas.document, description: `The ${o.schemas.type} as this request left it` },
    ...(o.accepted ? { accepted: o.accepted.description } : {}),
    errors: {
      resource_not_found: `no such ${o.schemas.type} among those you may see`,
      id_mismatch: '`data.type` or `data.id` differ from the URL',
      ...o.errors,
    },
  });
  app.patch(`/${o.segment}/:${key.name}`, { schema, config: { conditional: true } }, async (request, reply) => {
    const value = (request.params as Record<string, string>)[key.name];
    const { data } = request.body as { data: { type: string; id: string; attributes: Static<B>['data']['attributes'] } };
    const precondition = preconditionOf(request, o.toResource);
    if (o.match) assertUpdateTarget(data, o.schemas.type, o.match.target(value), o.match.same);
    else assertUpdateTarget(data, o.schemas.type, value);
    const out = await o.update(request, value, data.attributes, precondition);
    assertChecked(precondition);
    const { row, job } = o.accepted ? (out as Accepted<R>) : { row: out as R, job: null };
    if (job) return o.accepted!.send(request, reply, o.toResource(row), job);
    // The answer's ETag is the one a GET answers next while nothing changes.
    return sendTagged(request, reply, links, o.toResource(row));
  });
}
