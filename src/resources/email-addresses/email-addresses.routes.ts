// /email-addresses (API guide "E-mail addresses", "Password rules", "Queue jobs"): list with
// filters, one address, POST answering 202 with the address (a generated password once,
// links.queue-job), PATCH (200), POST …/password (200 with the new password), DELETE (202 with the
// queue-job), forward targets (204) and application passwords (201, 204, and the list, which the
// original API does not have).
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { ListQueryString, addDocumentSchemas, operation } from '../../jsonapi/schema.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { updateRoute } from '../../jsonapi/update.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { acceptedResource, deleteRoute } from '../accepted.js';
import {
  AppPasswordCreateBody, AppPasswordParams, AppPasswordSchemas, EMAIL_FILTERS, EmailAddressSchemas, EmailCreateBody, EmailIdParam, EmailUpdateBody,
  ForwardTargetParams, appPasswordResource, emailAddressResource,
} from './email-addresses.schema.js';
import type { EmailAddressesService } from './email-addresses.service.js';

export function emailAddressesRoutes(app: TypedApp, service: EmailAddressesService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof emailAddressResource>[0]) => emailAddressResource(row, links);

  readRoutes(app, links, {
    segment: 'email-addresses',
    filters: EMAIL_FILTERS,
    schemas: EmailAddressSchemas,
    summaries: { list: 'List e-mail addresses; filters package_id, address (any case), domain (the exact domain part)', one: 'One e-mail address' },
    key: { name: 'id', schema: EmailIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
  });

  updateRoute(app, links, {
    segment: 'email-addresses',
    schemas: EmailAddressSchemas,
    key: { name: 'id', schema: EmailIdParam },
    body: EmailUpdateBody,
    summary: 'Change the password, description, antispam or one autoresponder setting; answers once live (an antispam change the spam filter must fetch: once it applies it)',
    errors: {
      invalid_api_data: 'an attribute does not fit (the pointer names it), more than one autoresponder key, or an attribute a forward does not have',
      invalid_password: 'the password breaks one or more password rules: one error per rule',
      invalid_state: 'the address is being deleted',
    },
    update: (request, id, attributes, precondition) => service.update(actorOf(request), id, attributes, precondition),
    toResource,
  });

  const create = operation('POST', {
    operationId: 'createEmailAddress',
    tags: ['email-addresses'],
    summary: 'Create a mailbox or a forward: 202 with the address and, when you sent no password, the generated one (shown once)',
    body: EmailCreateBody,
    success: {
      status: 202,
      document: EmailAddressSchemas.document,
      description: 'Accepted: the address (with `password` when it was generated); it works when the job in `links.queue-job` is done',
    },
    errors: {
      resource_not_found: 'the domain is not one of yours',
      conflict: 'the address exists already',
      limit_reached: "the package has as many addresses as its plan's max_email_addresses allows",
      invalid_api_data: 'the body does not fit; `source.pointer` names the member',
      invalid_password: 'the password breaks one or more password rules: one error per rule',
      service_unavailable: 'no mail server is registered yet',
    },
  });
  app.post('/email-addresses', { schema: create }, async (request, reply) => {
    const { row, job, password } = await service.create(actorOf(request), request.body.data.attributes);
    return acceptedResource(request, reply, links, emailAddressResource(row, links, password), job!);
  });

  const password = operation('POST', {
    operationId: 'resetEmailAddressPassword',
    tags: ['email-addresses'],
    summary: 'Set a new generated mailbox password: 200 with the mailbox and the password, shown once; the old one stops working at once',
    params: EmailIdParam,
    success: { status: 200, document: EmailAddressSchemas.document, description: 'The mailbox with its new `password`' },
    errors: { resource_not_found: 'no such address among those you may see', invalid_state: 'the address is a forward, or it is being deleted' },
  });
  app.post('/email-addresses/:id/password', { schema: password }, async (request) => {
    const { row, password: generated } = await service.resetPassword(actorOf(request), request.params.id);
    return resourceDocument(request, links, emailAddressResource(row, links, generated));
  });

  deleteRoute(app, links, {
    segment: 'email-addresses',
    operationId: 'deleteEmailAddress',
    params: EmailIdParam,
    summary: 'Delete a mailbox (with its stored mail, permanently) or a forward: 202 with the queue-job; logins and deliveries stop at once',
    accepted: 'the job that removes the address and its mail from the mail server',
    errors: { resource_not_found: 'no such address among those you may see' },
    remove: (request, id, precondition) => service.delete(actorOf(request), id, precondition),
    representation: toResource,
  });

  const noContent = (description: string) => ({ status: 204 as const, description });
  const addTarget = operation('POST', {
    operationId: 'addForwardTarget',
    tags: ['email-addresses'],
    summary: 'Add one forwarding target (204); one already there is left as it is',
    params: ForwardTargetParams,
    success: noContent('Added: mail is forwarded there from now on'),
    errors: {
      resource_not_found: 'no such address among those you may see',
      invalid_api_data: 'the target is not an e-mail address, is the address itself, or the address has 100 targets',
      invalid_state: 'the address is being deleted',
    },
  });
  app.post('/email-addresses/:id/forward-to/:target', { schema: addTarget }, async (request, reply) => {
    await service.addForwardTarget(actorOf(request), request.params.id, request.params.target);
    return reply.code(204).send();
  });

  const removeTarget = operation('DELETE', {
    operationId: 'removeForwardTarget',
    tags: ['email-addresses'],
    summary: 'Remove one forwarding target (204)',
    params: ForwardTargetParams,
    success: noContent('Removed: mail is no longer forwarded there'),
    errors: {
      resource_not_found: 'no such address among those you may see, or the target is not one of its targets',
      invalid_state: "it is a forward's last target, or the address is being deleted",
    },
  });
  app.delete('/email-addresses/:id/forward-to/:target', { schema: removeTarget }, async (request, reply) => {
    await service.removeForwardTarget(actorOf(request), request.params.id, request.params.target);
    return reply.code(204).send();
  });

  addDocumentSchemas(app, AppPasswordSchemas.resource, AppPasswordSchemas.document, AppPasswordSchemas.list);
  const listApps = operation('GET', {
    operationId: 'listApplicationPasswords',
    tags: ['email-addresses'],
    summary: 'List the application passwords of a mailbox (never their passwords), with when each last logged in',
    params: EmailIdParam,
    // Documents the paging parameters parseListQuery reads (no filters); validation stays with it.
    querystring: ListQueryString([]),
    success: { status: 200, document: AppPasswordSchemas.list, description: 'The application passwords of the mailbox' },
    errors: { resource_not_found: 'no such address among those you may see' },
  });
  app.get('/email-addresses/:id/application-passwords', { schema: listApps }, async (request) => {
    const q = parseListQuery(request.query as Record<string, unknown>, []);
    const id = request.params.id;
    return listDocument(request, links, q, await service.appPasswords(actorOf(request), id, q.page), (row) => appPasswordResource(id, row, links));
  });

  const createApp = operation('POST', {
    operationId: 'createApplicationPassword',
    tags: ['email-addresses'],
    summary: 'Create an application password: 201 with the password, shown once; it logs in as the mailbox at once',
    params: EmailIdParam,
    body: AppPasswordCreateBody,
    success: { status: 201, document: AppPasswordSchemas.document, description: 'Created: the application password with `password`' },
    errors: {
      resource_not_found: 'no such address among those you may see',
      invalid_api_data: 'device or application is empty or longer than 255 characters',
      invalid_state: 'the address is a forward, or it is being deleted',
    },
  });
  app.post('/email-addresses/:id/application-passwords', { schema: createApp }, async (request, reply) => {
    const id = request.params.id;
    const { row, password: secret } = await service.createAppPassword(actorOf(request), id, request.body.data.attributes);
    reply.code(201);
    return resourceDocument(request, links, appPasswordResource(id, row, links, secret));
  });

  const deleteApp = operation('DELETE', {
    operationId: 'deleteApplicationPassword',
    tags: ['email-addresses'],
    summary: 'Delete an application password (204); it stops working at once',
    params: AppPasswordParams,
    success: noContent('Deleted'),
    errors: { resource_not_found: 'no such address among those you may see, or no such application password of it' },
  });
  app.delete('/email-addresses/:id/application-passwords/:appId', { schema: deleteApp }, async (request, reply) => {
    await service.deleteAppPassword(actorOf(request), request.params.id, request.params.appId);
    return reply.code(204).send();
  });
}
