// /dns-records (API guide "DNS records", "Compatibility with existing clients", "Queue jobs"): list
// with filters, one record, POST and DELETE answering 202 with the queue-job and its URL in
// Content-Location.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { addDocumentSchemas, operation } from '../../jsonapi/schema.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { acceptedJob, deleteRoute } from '../accepted.js';
import { QueueJobSchemas } from '../queue-jobs/queue-jobs.schema.js';
import { DNS_RECORD_FILTERS, DnsRecordCreateBody, DnsRecordIdParam, DnsRecordSchemas, dnsRecordResource } from './dns-records.schema.js';
import type { DnsRecordsService } from './dns-records.service.js';

export function dnsRecordsRoutes(app: TypedApp, service: DnsRecordsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof dnsRecordResource>[0]) => dnsRecordResource(row, links);
  readRoutes(app, links, {
    segment: 'dns-records',
    filters: DNS_RECORD_FILTERS,
    schemas: DnsRecordSchemas,
    summaries: { list: 'List DNS records; filters domain (exact domain, no subdomains), package_id, record_type', one: 'One DNS record' },
    key: { name: 'id', schema: DnsRecordIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
  });

  // Both writes answer with the job (acceptedJob); its documents are the queue-jobs ones.
  addDocumentSchemas(app, QueueJobSchemas.resource, QueueJobSchemas.document);

  const create = operation('POST', {
    operationId: 'createDnsRecord',
    tags: ['dns-records'],
    summary: 'Create a DNS record: 202 with the queue-job; the record is live when the job is done',
    body: DnsRecordCreateBody,
    success: {
      status: 202,
      document: QueueJobSchemas.document,
      description: 'Accepted: the job that puts the record live; `links.dns-record` is the new record, listed from now on',
    },
    errors: {
      resource_not_found: 'domain is not one of the domains you may see',
      conflict: 'the record clashes with existing records (the same record, CNAME rules, the DKIM name, a delegation, or too much data at one name); `source.pointer` names the member',
      invalid_api_data: 'a value is invalid, the domain has no presence or is a subdomain, or the body does not fit; `source.pointer` names the member',
    },
  });
  app.post('/dns-records', { schema: create }, async (request, reply) => {
    const { data } = request.body;
    return acceptedJob(request, reply, links, await service.create(actorOf(request), data.attributes));
  });

  deleteRoute(app, links, {
    segment: 'dns-records',
    operationId: 'deleteDnsRecord',
    params: DnsRecordIdParam,
    summary: 'Delete a DNS record: 202 with the queue-job; managed records answer 403',
    accepted: 'the job that removes the record',
    errors: {
      record_not_deletable: 'the record is managed by the service (e.g. the DKIM key)',
      resource_not_found: 'no such DNS record among those you may see',
    },
    remove: (request, id, precondition) => service.delete(actorOf(request), id, precondition),
    representation: toResource,
  });
}
