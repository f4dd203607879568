// package (API guide "Packages"): read-only; its relationships link to every object assigned to it.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type Relationship, type ResourceObject } from '../../jsonapi/document.js';
import { EXTENSION, RelatedList, Timestamp, ToOne, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import { sftpHostOf } from '../../provisioning/web/servers.repository.js';
import type { PackageRow } from './packages.repository.js';

export const PACKAGE_FILTERS = ['owner_id', 'plan_id', 'linux_user'] as const;

/** Lists that take `filter[package_id]` (API guide "Packages"): relationship name = URL segment. */
const ASSIGNED = ['domains', 'dns-records', 'databases', 'subdomains', 'email-addresses', 'ssh-keys'] as const;
/** Relationships the original API does not have (marked x-hostplane-extension). */
const ADDED: readonly string[] = ['ssh-keys'];

/** The example is the package of the demo dataset's end customer 10002. */
export const PackageIdParam = idParam('2');

/** What packageResource emits (OpenAPI components Package, PackageDocument, PackageList). */
export const PackageSchemas = resourceSchemas('Package', 'package', {
  attributes: Type.Object({
    name: Type.String(),
    linux_user: Type.String({ description: 'the system user the package runs as' }),
    created_at: Timestamp(),
    sftp_host: Type.Union([Type.String(), Type.Null()], { ...EXTENSION, description: "where to connect for SFTP (the package's web server); null until the package has one (its first subdomain or SSH key)" }),
    sftp_port: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.Null()], { ...EXTENSION, description: 'the SFTP port there; null as sftp_host' }),
    sftp_user: Type.String({ ...EXTENSION, description: 'the user to log in as over SFTP (with a key of /ssh-keys): the Linux user' }),
  }),
  relationships: Type.Object({
    owner: ToOne('customer'),
    plan: ToOne('plan', { related: true }),
    ...Object.fromEntries(
      ASSIGNED.map((segment) => {
        const schema = RelatedList(`the package's ${segment}: ${segment}?filter[package_id]=<id>`);
        return [segment, ADDED.includes(segment) ? Object.assign(schema, EXTENSION) : schema];
      }),
    ),
  }),
  example: {
    type: 'package',
    id: '2',
    attributes: {
      name: 'shop-demo.example', linux_user: 'demo_shop', created_at: '2026-11-22T03:51:28.685Z', sftp_host: 'web1.example.net', sftp_port: 22, sftp_user: 'demo_shop',
    },
    relationships: {
      owner: { data: { type: 'customer', id: '10002' } },
      plan: { data: { type: 'plan', id: '2' }, links: { related: 'https://api.example.net/plans/2' } },
      ...Object.fromEntries(ASSIGNED.map((segment) => [segment, { links: { related: `https://api.example.net/${segment}?filter[package_id]=2` } }])),
    },
    links: { self: 'https://api.example.net/packages/2' },
  },
});

export function packageResource(row: PackageRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  const relationships: Record<string, Relationship> = {
    owner: ref('customer', row.customer_id),
    plan: { ...ref('plan', row.plan_id), links: { related: links.to('/plans/', String(row.plan_id)) } },
  };
  // Raw brackets, as clients write filters themselves (API guide "Compatibility with existing
  // clients"); the id is a number.
  for (const segment of ASSIGNED) relationships[segment] = { links: { related: links.to(`/${segment}?filter[package_id]=${id}`) } };
  return {
    type: 'package',
    id,
    attributes: {
      name: row.name,
      linux_user: row.linux_user,
      created_at: row.created_at,
      sftp_host: row.ws_addresses === null ? null : sftpHostOf({ sftp_host: row.sftp_host, addresses: row.ws_addresses }),
      sftp_port: row.sftp_port,
      sftp_user: row.linux_user,
    },
    relationships,
    links: { self: links.to('/packages/', id) },
  };
}
