// ssh-key (API guide "SSH keys", an addition to the original API): request body and the wire
// representation. Attribute order: `package_id, public_key, fingerprint, algorithm, description,
// created_at, last_used_at`; fingerprint and algorithm are read from the key, never sent.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, EXTENSION, Nullable, StringEnum, Timestamp, ToOne, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { SshKeyRow } from './ssh-keys.repository.js';
import { ACCEPTED_ALGORITHMS } from './ssh-keys.rules.js';

export const SSH_KEY_FILTERS = ['package_id', 'fingerprint', 'algorithm'] as const;

const Description = Type.String({ maxLength: 255, description: 'free text for your own use; null stores ""' });

/** A real Ed25519 key: the example a client can send as it is (test/ops/openapi.test.ts does). */
export const EXAMPLE_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBteW+zSPFCGm+dBeuAeSmaeqHHjNs7gQU2l2E6yWasc demo@laptop';
export const EXAMPLE_FINGERPRINT = 'SHA256:4nw2TUGnWCtFM+gf84hdEPx7P+byq3pibZQ6Zmli1Dg';

// The key's rules are the service's (422 on public_key with the reason); the schema fixes the shape.
export const SshKeyCreateBody = CreateBody(
  'ssh-key',
  Type.Object(
    {
      package_id: Type.String({ description: 'a package of yours', examples: ['2'] }),
      public_key: Type.String({ description: 'one OpenSSH public key: `<algorithm> <base64> [comment]`, e.g. the content of ~/.ssh/id_ed25519.pub', examples: [EXAMPLE_KEY] }),
      description: Type.Optional(Nullable(Description)),
    },
    { additionalProperties: false },
  ),
  { package_id: '2', public_key: EXAMPLE_KEY, description: 'laptop' },
);

/** The example is the first key of a new store (the POST example creates it). */
export const SshKeyIdParam = idParam('1');

/** What sshKeyResource emits (OpenAPI components SshKey, SshKeyDocument, SshKeyList). */
export const SshKeySchemas = resourceSchemas('SshKey', 'ssh-key', {
  attributes: Type.Object({
    package_id: Type.String(),
    public_key: Type.String({ description: '`<algorithm> <base64> [comment]`, as the key file holds it' }),
    fingerprint: Type.String({ description: 'SHA256 fingerprint as `ssh-keygen -l` prints it, e.g. SHA256:4nw2…' }),
    algorithm: StringEnum([...ACCEPTED_ALGORITHMS]),
    description: Type.String(),
    created_at: Timestamp(),
    last_used_at: Nullable(Timestamp(), 'when the key last logged in; null: never yet'),
  }),
  relationships: Type.Object({ package: ToOne('package') }),
  links: Type.Object({
    self: Type.String({ description: 'URL of this object' }),
    'queue-job': Type.Optional(Type.String({ description: 'in the 202 answer of POST: URL of the job that writes the key' })),
  }),
  description: 'An SSH public key of a package: its Linux user logs in over SFTP with it (an addition to the original API)',
  example: {
    type: 'ssh-key',
    id: '1',
    attributes: {
      package_id: '2',
      public_key: EXAMPLE_KEY,
      fingerprint: EXAMPLE_FINGERPRINT,
      algorithm: 'ssh-ed25519',
      description: 'laptop',
      created_at: '2026-11-22T03:51:28.685Z',
      last_used_at: null,
    },
    relationships: { package: { data: { type: 'package', id: '2' } } },
    links: { self: 'https://api.example.net/ssh-keys/1' },
  },
});
// The component itself is the extension: its members are all new.
Object.assign(SshKeySchemas.resource, EXTENSION);

export function sshKeyResource(row: SshKeyRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return {
    type: 'ssh-key',
    id,
    attributes: {
      package_id: String(row.package_id),
      public_key: row.public_key,
      fingerprint: row.fingerprint,
      algorithm: row.algorithm,
      description: row.description,
      created_at: row.created_at,
      last_used_at: row.last_used_at,
    },
    relationships: { package: ref('package', row.package_id) },
    links: { self: links.to('/ssh-keys/', id) },
  };
}
