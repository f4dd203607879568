// /webhooks (API guide "Webhooks", an addition to the original API): list with filters, one
// webhook, POST answering 201 with the webhook and its secret (shown once), PATCH answering 200,
// DELETE answering 204 — no job: nothing but the store changes — and the attempts of one webhook.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { EXTENSION, ListQueryString, addDocumentSchemas, operation } from '../../jsonapi/schema.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { updateRoute } from '../../jsonapi/update.js';
import { assertChecked, preconditionOf } from '../../jsonapi/conditional.js';
import {
  DELIVERY_FILTERS, WEBHOOK_FILTERS, WebhookCreateBody, WebhookDeleteParam, WebhookDeliverySchemas, WebhookIdParam, WebhookSchemas, WebhookUpdateBody, deliveryResource,
  webhookResource,
} from './webhooks.schema.js';
import type { WebhooksService } from './webhooks.service.js';

const URL_OR_EVENTS =
  'url is not an https:// URL (plain http:// only for addresses the operator allows), carries credentials or a fragment, or names a loopback, private or other special address; or events is empty, lists an unknown event or one twice; `source.pointer` names the member (an entry of events by its index)';

export function webhooksRoutes(app: TypedApp, service: WebhooksService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof webhookResource>[0]) => webhookResource(row, links);

  readRoutes(app, links, {
    segment: 'webhooks',
    filters: WEBHOOK_FILTERS,
    schemas: WebhookSchemas,
    summaries: { list: 'List webhooks; filters customer_id, status', one: 'One webhook' },
    key: { name: 'id', schema: WebhookIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
    extension: true,
  });

  const create = operation('POST', {
    operationId: 'createWebhook',
    ...EXTENSION,
    tags: ['webhooks'],
    summary: 'Create a webhook: 201 with the webhook and its signing secret, shown once',
    body: WebhookCreateBody,
    success: { status: 201, document: WebhookSchemas.document, description: 'Created: the webhook with `secret` (whsec_…), which no answer shows again' },
    errors: {
      resource_not_found: 'customer_id is not one of the customers you may see',
      limit_reached: 'the customer has as many webhooks as it may have',
      invalid_api_data: URL_OR_EVENTS,
    },
  });
  app.post('/webhooks', { schema: create }, async (request, reply) => {
    const { row, secret } = await service.create(actorOf(request), request.body.data.attributes);
    reply.code(201);
    return resourceDocument(request, links, webhookResource(row, links, secret));
  });

  updateRoute(app, links, {
    segment: 'webhooks',
    schemas: WebhookSchemas,
    key: { name: 'id', schema: WebhookIdParam },
    body: WebhookUpdateBody,
    summary: 'Change a webhook (200): url, events, description, active; switching it off drops the events waiting for it',
    errors: { invalid_api_data: URL_OR_EVENTS },
    update: (request, id, attributes, precondition) => service.update(actorOf(request), id, attributes, precondition),
    toResource,
    extension: true,
  });

  const remove = operation('DELETE', {
    operationId: 'deleteWebhook',
    ...EXTENSION,
    tags: ['webhooks'],
    summary: 'Delete a webhook (204) with the events waiting for it and its attempts',
    params: WebhookDeleteParam,
    conditional: 'write',
    success: { status: 204, description: 'Deleted: nothing more is sent to it' },
    errors: { resource_not_found: 'no such webhook among those you may see' },
  });
  app.delete('/webhooks/:id', { schema: remove, config: { conditional: true } }, async (request, reply) => {
    const precondition = preconditionOf(request, toResource);
    await service.delete(actorOf(request), request.params.id, precondition);
    assertChecked(precondition);
    return reply.code(204).send();
  });

  addDocumentSchemas(app, WebhookDeliverySchemas.resource, WebhookDeliverySchemas.list);
  const deliveries = operation('GET', {
    operationId: 'listWebhookDeliveries',
    ...EXTENSION,
    tags: ['webhooks'],
    summary: 'List the delivery attempts of a webhook, newest first; filters event, status, event_id',
    params: WebhookIdParam,
    querystring: ListQueryString(DELIVERY_FILTERS),
    success: { status: 200, document: WebhookDeliverySchemas.list, description: 'The attempts of the last 7 days' },
    errors: { resource_not_found: 'no such webhook among those you may see' },
  });
  app.get('/webhooks/:id/deliveries', { schema: deliveries }, async (request) => {
    const q = parseListQuery(request.query as Record<string, unknown>, DELIVERY_FILTERS);
    return listDocument(request, links, q, await service.deliveries(actorOf(request), request.params.id, q.filters, q.page), (row) => deliveryResource(row, links));
  });
}
