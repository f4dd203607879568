// The one 202 Accepted answer of every write that runs as a job (API guide "Queue jobs"), shared by
// the resources whose writes run as jobs: `Content-Location` names the job, and the primary data is
// the job itself (dns-records) or the resource with `links.queue-job` (the others); a DELETE with
// If-Match removes only the object it names (API guide "Safe retries").
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LinkBuilder, ResourceObject } from '../jsonapi/document.js';
import { resourceDocument } from '../jsonapi/respond.js';
import type { QueueJobRow } from '../queue/jobs.js';
import type { TObject } from 'typebox';
import type { ErrorCode } from '../errors.js';
import { EXTENSION, addDocumentSchemas, operation } from '../jsonapi/schema.js';
import type { TypedApp } from '../jsonapi/typed-app.js';
import { QueueJobSchemas, queueJobResource } from './queue-jobs/queue-jobs.schema.js';
import { assertChecked, preconditionOf, sendTagged } from '../jsonapi/conditional.js';
import type { Precondition } from '../db/locks.js';

/** `tagged`: the object whose ETag the answer carries. */
function accept(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, job: QueueJobRow, data: ResourceObject, tagged?: ResourceObject) {
  // The audit trail records the job with the request (API guide "Audit events").
  request.queueJobId = job.id;
  reply.code(202).header('content-location', links.to('/queue-jobs/', String(job.id)));
  return tagged ? sendTagged(request, reply, links, data, { tagged }) : resourceDocument(request, links, data);
}

/** 202 with the job as primary data: `return acceptedJob(request, reply, links, await service.create(…))`. */
export function acceptedJob(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, job: QueueJobRow) {
  return accept(request, reply, links, job, queueJobResource(job, links));
}

/**
 * 202 with the changed resource as primary data and its job in `links.queue-job`:
 * `return acceptedResource(request, reply, links, databaseResource(row, links), job)`. `tagged`
 * (the answer of a PATCH): with the ETag of the object as GET shows it, without the job's link
 * (API guide "Safe retries").
 */
export function acceptedResource(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, resource: ResourceObject, job: QueueJobRow, o: { tagged?: boolean } = {}) {
  const data = { ...resource, links: { ...resource.links, 'queue-job': links.to('/queue-jobs/', String(job.id)) } };
  return accept(request, reply, links, job, data, o.tagged ? resource : undefined);
}

/** What a DELETE that runs as a job needs: `deleteRoute(app, links, { segment: 'databases', … })`. */
export interface DeleteRoute<R = never> {
  /** The URL segment and OpenAPI tag, e.g. `databases`; the route is `DELETE /<segment>/:id`. */
  segment: string;
  /** `deleteDatabase` */
  operationId: string;
  params: TObject;
  summary: string;
  /** What the 202's job does. */
  accepted: string;
  errors: Partial<Record<ErrorCode, string>>;
  /**
   * Enqueues the removal; a `precondition` (If-Match, If-None-Match; only with `representation`)
   * is checked by the service on the object in its transaction (API guide "Safe retries").
   */
  remove(request: FastifyRequest, id: string, precondition: Precondition<R> | undefined): Promise<QueueJobRow>;
  /** The object as GET shows it, whose ETag If-Match names; without it the DELETE takes no conditions of its own. */
  representation?: (row: R) => ResourceObject;
  /** An addition to the original API (marked `x-hostplane-extension` in OpenAPI). */
  extension?: boolean;
}

/**
 * Registers `DELETE /<segment>/:id` answering 202 with the queue-job that removes the object (a
 * repeated DELETE before it ran answers the same job: the services return the pending one).
 */
export function deleteRoute<R = never>(app: TypedApp, links: LinkBuilder, o: DeleteRoute<R>): void {
  addDocumentSchemas(app, QueueJobSchemas.resource, QueueJobSchemas.document);
  const { representation } = o;
  const schema = operation('DELETE', {
    operationId: o.operationId,
    ...(o.extension ? EXTENSION : {}),
    tags: [o.segment],
    summary: o.summary,
    params: o.params,
    ...(representation ? { conditional: 'write' as const } : {}),
    success: { status: 202, document: QueueJobSchemas.document, description: `Accepted: ${o.accepted}; a repeated DELETE before it ran answers the same job` },
    errors: o.errors,
  });
  app.delete(`/${o.segment}/:id`, { schema, config: { conditional: representation !== undefined } }, async (request, reply) => {
    const precondition = representation ? preconditionOf(request, representation) : undefined;
    const job = await o.remove(request, (request.params as { id: string }).id, precondition);
    assertChecked(precondition);
    return acceptedJob(request, reply, links, job);
  });
}
