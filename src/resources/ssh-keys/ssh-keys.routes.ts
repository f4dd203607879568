// /ssh-keys (API guide "SSH keys", an addition to the original API): list with filters, one key,
// POST answering 202 with the key (links.queue-job), DELETE answering 202 with the queue-job.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { EXTENSION, operation } from '../../jsonapi/schema.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { acceptedResource, deleteRoute } from '../accepted.js';
import { SSH_KEY_FILTERS, SshKeyCreateBody, SshKeyIdParam, SshKeySchemas, sshKeyResource } from './ssh-keys.schema.js';
import type { SshKeysService } from './ssh-keys.service.js';

export function sshKeysRoutes(app: TypedApp, service: SshKeysService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof sshKeyResource>[0]) => sshKeyResource(row, links);

  readRoutes(app, links, {
    segment: 'ssh-keys',
    filters: SSH_KEY_FILTERS,
    schemas: SshKeySchemas,
    summaries: { list: 'List SSH keys; filters package_id, fingerprint, algorithm', one: 'One SSH key' },
    key: { name: 'id', schema: SshKeyIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
    extension: true,
  });

  const create = operation('POST', {
    operationId: 'createSshKey',
    ...EXTENSION,
    tags: ['ssh-keys'],
    summary: "Add an SSH public key to a package: 202 with the key; it logs in over SFTP as the package's Linux user once the job is done",
    body: SshKeyCreateBody,
    success: {
      status: 202,
      document: SshKeySchemas.document,
      description: "Accepted: the key with its fingerprint; sshd on the package's web server takes it when the job in `links.queue-job` is done",
    },
    errors: {
      resource_not_found: 'package_id is not one of the packages you may see',
      conflict: 'the package holds this key already (`source.pointer` /data/attributes/public_key)',
      limit_reached: "the package holds as many keys as its plan's ssh_keys_per_package allows",
      invalid_api_data:
        'public_key is not one accepted OpenSSH public key (another algorithm, RSA under 3072 bits, a private key, options before the key, several keys, broken base64), or the body does not fit; `source.pointer` names the member',
      service_unavailable: 'no web server is registered yet to place the package on',
    },
  });
  app.post('/ssh-keys', { schema: create }, async (request, reply) => {
    const { row, job } = await service.create(actorOf(request), request.body.data.attributes);
    return acceptedResource(request, reply, links, toResource(row), job);
  });

  deleteRoute(app, links, {
    segment: 'ssh-keys',
    operationId: 'deleteSshKey',
    params: SshKeyIdParam,
    summary: 'Remove an SSH key: 202 with the queue-job; it no longer logs in once the job is done',
    accepted: 'the job that writes the key file without the key',
    errors: { resource_not_found: 'no such ssh-key among those you may see' },
    remove: (request, id, precondition) => service.delete(actorOf(request), id, { precondition }),
    representation: toResource,
    extension: true,
  });
}
