// The one 202 Accepted answer of every write that runs as a job (spec §3.1; API-NOTES §1.4–1.5, §5):
// `Content-Location` names the job, and the primary data is either the job itself (dns-records)
// or the resource with `links.queue-job` (databases, subdomains, e-mail addresses).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import { resourceDocument } from '../../jsonapi/respond.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { queueJobResource } from './queue-jobs.schema.js';

function accept(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, job: QueueJobRow, data: ResourceObject) {
  reply.code(202).header('content-location', links.to('/queue-jobs/', String(job.id)));
  return resourceDocument(request, links, data);
}

/** 202 with the job as primary data: `return acceptedJob(request, reply, links, await service.create(…))`. */
export function acceptedJob(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, job: QueueJobRow) {
  return accept(request, reply, links, job, queueJobResource(job, links));
}

/**
 * 202 with the changed resource as primary data and its job in `links.queue-job`:
 * `return acceptedResource(request, reply, links, databaseResource(row, links), job)`.
 */
export function acceptedResource(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, resource: ResourceObject, job: QueueJobRow) {
  const data = { ...resource, links: { ...resource.links, 'queue-job': links.to('/queue-jobs/', String(job.id)) } };
  return accept(request, reply, links, job, data);
}
