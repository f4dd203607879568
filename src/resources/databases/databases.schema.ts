// database (API guide "Databases"): request bodies and the wire representation.
//
// Attribute order is fixed by the API guide "Databases": `package_id, db_type, version, server,
// name, username, description, usage, created_at`, then `password` only in the answers of POST
// /databases and POST /databases/{id}/password (the one moment the plaintext exists). `name` and
// `username` are equal and derived; `usage` is null until the first measurement.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, Nullable, StringEnum, Timestamp, ToOne, UpdateBody, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { DatabaseRow } from './databases.repository.js';

export const DATABASE_FILTERS = ['package_id', 'server', 'db_type', 'version'] as const;
export const DB_TYPES = ['mariadb', 'mysql'] as const;

const Description = Type.String({ maxLength: 255, description: 'free text for your own use; null stores ""' });

// Types and offered combinations are judged by the service (422 naming what the package can
// create); the schema fixes the shape. The examples name the demo dataset's shop package.
export const DatabaseCreateBody = CreateBody(
  'database',
  Type.Object(
    {
      package_id: Type.String({ description: 'a package of yours', examples: ['2'] }),
      db_type: Type.String({ description: 'mariadb or mysql', examples: ['mariadb'] }),
      version: Type.String({ description: 'major.minor, e.g. 10.11; the plan lists what a package can create', examples: ['10.11'] }),
      description: Type.Optional(Nullable(Description)),
    },
    { additionalProperties: false },
  ),
  { package_id: '2', db_type: 'mariadb', version: '10.11', description: 'shop' },
);

export const DatabaseUpdateBody = UpdateBody(
  'database',
  Type.Object({ description: Type.Optional(Nullable(Description)) }, { additionalProperties: false }),
  { id: '1', attributes: { description: 'shop (live)' } },
);

/** The example is the first database of a new store (the POST example creates it). */
export const DatabaseIdParam = idParam('1');

/** What databaseResource emits (OpenAPI components Database, DatabaseDocument, DatabaseList). */
export const DatabaseSchemas = resourceSchemas('Database', 'database', {
  attributes: Type.Object({
    package_id: Type.String(),
    db_type: StringEnum([...DB_TYPES]),
    version: Type.String({ description: 'major.minor, e.g. 10.11' }),
    server: Type.String({ description: 'the name of the database server hosting it' }),
    name: Type.String({ description: 'the database name: lower-case letters, digits and _, at most 32 characters' }),
    username: Type.String({ description: 'the user name to log in with; equal to name' }),
    description: Type.String(),
    usage: Nullable(
      Type.Object({ bytes: Type.Integer({ minimum: 0, description: 'data and index size' }), updated_at: Timestamp('when it was measured') }),
      'null until the first measurement (refreshed daily)',
    ),
    created_at: Timestamp(),
    password: Type.Optional(Type.String({ description: 'only in the answers of POST /databases and POST /databases/{id}/password; shown once' })),
  }),
  relationships: Type.Object({ package: ToOne('package') }),
  links: Type.Object({
    self: Type.String({ description: 'URL of this object' }),
    'queue-job': Type.Optional(Type.String({ description: 'in the 202 answers: URL of the job that applies the change' })),
  }),
  example: {
    type: 'database',
    id: '1',
    attributes: {
      package_id: '2',
      db_type: 'mariadb',
      version: '10.11',
      server: 'db1',
      name: 'demo_shop_1',
      username: 'demo_shop_1',
      description: 'shop',
      usage: { bytes: 81920, updated_at: '2026-11-23T03:00:00.000Z' },
      created_at: '2026-11-22T03:51:28.685Z',
    },
    relationships: { package: { data: { type: 'package', id: '2' } } },
    links: { self: 'https://api.example.net/databases/1' },
  },
});

/** The database as a client sees it; `password` only right after it was generated. */
export function databaseResource(row: DatabaseRow, links: LinkBuilder, password?: string): ResourceObject {
  const id = String(row.id);
  const usage = row.usage_bytes === null || row.usage_updated_at === null ? null : { bytes: Number(row.usage_bytes), updated_at: row.usage_updated_at };
  return {
    type: 'database',
    id,
    attributes: {
      package_id: String(row.package_id),
      db_type: row.db_type,
      version: row.version,
      server: row.server_name,
      name: row.name,
      username: row.name,
      description: row.description,
      usage,
      created_at: row.created_at,
      ...(password === undefined ? {} : { password }),
    },
    relationships: { package: ref('package', row.package_id) },
    links: { self: links.to('/databases/', id) },
  };
}
