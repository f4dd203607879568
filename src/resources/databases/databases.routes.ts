// /databases (API guide "Databases", "Queue jobs"): list with filters, one database, POST and
// POST …/password answering 202 with the database (one-time password, links.queue-job), PATCH of
// the description (200), DELETE answering 202 with the queue-job.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { operation } from '../../jsonapi/schema.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { updateRoute } from '../../jsonapi/update.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { acceptedResource, deleteRoute } from '../accepted.js';
import { DATABASE_FILTERS, DatabaseCreateBody, DatabaseIdParam, DatabaseSchemas, DatabaseUpdateBody, databaseResource } from './databases.schema.js';
import type { DatabasesService, DatabaseWithPassword } from './databases.service.js';

export function databasesRoutes(app: TypedApp, service: DatabasesService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof databaseResource>[0]) => databaseResource(row, links);

  readRoutes(app, links, {
    segment: 'databases',
    filters: DATABASE_FILTERS,
    schemas: DatabaseSchemas,
    summaries: { list: 'List databases; filters package_id, server, db_type, version', one: 'One database' },
    key: { name: 'id', schema: DatabaseIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
  });

  updateRoute(app, links, {
    segment: 'databases',
    schemas: DatabaseSchemas,
    key: { name: 'id', schema: DatabaseIdParam },
    body: DatabaseUpdateBody,
    summary: 'Change the description of a database (null stores an empty one)',
    errors: { invalid_api_data: 'the description is not a string or null, or another attribute was sent' },
    update: (request, id, attributes, precondition) => service.update(actorOf(request), id, attributes, precondition),
    toResource,
  });

  /** 202 with the database, its one-time password and links.queue-job. */
  const withPassword = ({ row, job, password }: DatabaseWithPassword) => [databaseResource(row, links, password), job] as const;

  const create = operation('POST', {
    operationId: 'createDatabase',
    tags: ['databases'],
    summary: 'Create a database on the default server of its type and version: 202 with the database and its password, shown once',
    body: DatabaseCreateBody,
    success: {
      status: 202,
      document: DatabaseSchemas.document,
      description: 'Accepted: the database with `server`, `name`, `username` and the one-time `password`; it can be used when the job in `links.queue-job` is done',
    },
    errors: {
      resource_not_found: 'package_id is not one of the packages you may see',
      limit_reached: "the package has as many databases as its plan's max_databases allows",
      invalid_api_data: 'the package cannot create this db_type and version (the detail lists what it can), or the body does not fit; `source.pointer` names the member',
    },
  });
  app.post('/databases', { schema: create }, async (request, reply) => {
    const [resource, job] = withPassword(await service.create(actorOf(request), request.body.data.attributes));
    return acceptedResource(request, reply, links, resource, job);
  });

  const password = operation('POST', {
    operationId: 'resetDatabasePassword',
    tags: ['databases'],
    summary: 'Generate a new password: 202 with the database and the new password, shown once; the old one stops working when the job is done',
    params: DatabaseIdParam,
    success: {
      status: 202,
      document: DatabaseSchemas.document,
      description: 'Accepted: the database with the new `password`; the job in `links.queue-job` sets it and ends open sessions',
    },
    errors: {
      resource_not_found: 'no such database among those you may see',
      invalid_state: 'the database is being deleted',
    },
  });
  app.post('/databases/:id/password', { schema: password }, async (request, reply) => {
    const [resource, job] = withPassword(await service.resetPassword(actorOf(request), request.params.id));
    return acceptedResource(request, reply, links, resource, job);
  });

  deleteRoute(app, links, {
    segment: 'databases',
    operationId: 'deleteDatabase',
    params: DatabaseIdParam,
    summary: 'Delete a database and its user: 202 with the queue-job',
    accepted: 'the job that removes database and user',
    errors: { resource_not_found: 'no such database among those you may see' },
    remove: (request, id, precondition) => service.delete(actorOf(request), id, precondition),
    representation: toResource,
  });
}
