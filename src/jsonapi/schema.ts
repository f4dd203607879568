// TypeBox building blocks shared by every resource's request schemas.
import { Type, type TSchema } from 'typebox';

/** `T | null` as one JSON Schema type list (clean errors, unlike anyOf). */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** The PATCH envelope: `{"data":{"type":…,"id":…,"attributes":{…}}}` (spec §2.0). */
export const UpdateBody = <A extends TSchema>(type: string, attributes: A) =>
  Type.Object(
    {
      data: Type.Object(
        {
          type: Type.String({ description: `must be "${type}"` }),
          id: Type.String(),
          attributes,
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );

/** The create envelope: `{"data":{"type":…,"attributes":{…}}}` (spec §2.0). */
export const CreateBody = <A extends TSchema>(type: string, attributes: A) =>
  Type.Object(
    {
      data: Type.Object(
        { type: Type.Literal(type), attributes },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );

// No length rules: an id that cannot exist answers 404 like any unknown id.
export const IdParam = Type.Object({ id: Type.String() });

/** A query parameter as the parser hands it over: one string, or an array when repeated. */
const QueryValue = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));

/**
 * Documents a list endpoint's query parameters in the OpenAPI document (API-NOTES §2); it accepts
 * any value and any other key, so parseListQuery stays the one place that judges them:
 * `ListQueryString(['owner_id'])` → `filter[owner_id]`, `page[number]`, `page[size]`.
 */
export const ListQueryString = (filters: readonly string[]) =>
  Type.Object(
    Object.fromEntries([
      ...filters.map((f) => [`filter[${f}]`, QueryValue('values combine with OR (repeat the parameter or separate by commas)')]),
      ['page[number]', QueryValue('page number, from 1')],
      ['page[size]', QueryValue('objects per page, 1 to 1000; without paging parameters the page is unlimited')],
    ]),
  );

const Links = Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]));

/** A JSON:API error document (API-NOTES §1.12), as every failure answers. */
export const ErrorDocument = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        id: Type.String({ description: 'stable error code, e.g. resource_not_found' }),
        status: Type.String({ description: 'the HTTP status as a string' }),
        title: Type.String(),
        detail: Type.Optional(Type.String()),
        source: Type.Optional(Type.Object({ pointer: Type.Optional(Type.String()), parameter: Type.Optional(Type.String()) })),
      }),
    ),
    links: Type.Optional(Links),
  },
  { description: 'JSON:API error document' },
);

const ResourceObject = Type.Object({
  type: Type.String(),
  id: Type.String(),
  attributes: Type.Record(Type.String(), Type.Unknown()),
  relationships: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  links: Links,
});

/** A JSON:API success document: one resource object, or a list with links first and meta. */
export const SuccessDocument = Type.Object(
  {
    links: Type.Optional(Links),
    data: Type.Union([ResourceObject, Type.Array(ResourceObject)]),
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: 'JSON:API document' },
);
