// /dns-records (spec §4.2; API-NOTES §1.4, §1.5, §1.8, §1.11, §5): list with filters, one record,
// POST and DELETE answering 202 with the queue-job and its URL in Content-Location.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { IdParam, ListQueryString } from '../../jsonapi/schema.js';
import { queueJobResource } from '../queue-jobs/queue-jobs.schema.js';
import type { QueueJobRow } from '../queue-jobs/queue-jobs.repository.js';
import { DNS_RECORD_FILTERS, DnsRecordCreateBody, dnsRecordResource } from './dns-records.schema.js';
import type { DnsRecordsService } from './dns-records.service.js';

export function dnsRecordsRoutes(app: FastifyInstance, service: DnsRecordsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof dnsRecordResource>[0]) => dnsRecordResource(row, links);

  /** 202 Accepted: the queue-job is the primary data (API-NOTES §1.4–1.5), its URL in Content-Location (§3.1). */
  const accepted = (request: FastifyRequest, reply: FastifyReply, job: QueueJobRow) => {
    const data = queueJobResource(job, links);
    reply.code(202).header('content-location', links.to('/queue-jobs/', data.id));
    return resourceDocument(request, links, data);
  };

  app.get(
    '/dns-records',
    {
      schema: {
        tags: ['dns-records'],
        summary: 'List DNS records; filters domain (exact domain, no subdomains), package_id, record_type',
        querystring: ListQueryString(DNS_RECORD_FILTERS),
      },
    },
    async (request) => {
      const q = parseListQuery(request.query as Record<string, unknown>, DNS_RECORD_FILTERS);
      return listDocument(request, links, q, await service.list(actorOf(request), q.filters, q.page), toResource);
    },
  );

  app.get('/dns-records/:id', { schema: { tags: ['dns-records'], summary: 'One DNS record', params: IdParam } }, async (request) => {
    const { id } = request.params as Static<typeof IdParam>;
    return resourceDocument(request, links, toResource(await service.get(actorOf(request), id)));
  });

  app.post(
    '/dns-records',
    {
      schema: {
        tags: ['dns-records'],
        summary: 'Create a DNS record: 202 with the queue-job; the record is live when the job is done',
        body: DnsRecordCreateBody,
      },
    },
    async (request, reply) => {
      const { data } = request.body as Static<typeof DnsRecordCreateBody>;
      return accepted(request, reply, await service.create(actorOf(request), data.attributes));
    },
  );

  app.delete(
    '/dns-records/:id',
    { schema: { tags: ['dns-records'], summary: 'Delete a DNS record: 202 with the queue-job; managed records answer 403', params: IdParam } },
    async (request, reply) => {
      const { id } = request.params as Static<typeof IdParam>;
      return accepted(request, reply, await service.delete(actorOf(request), id));
    },
  );
}
