// TypeBox building blocks shared by every resource: the request schemas (Ajv validates them, so
// they decide what is accepted), and the documents and answers of each operation as the OpenAPI
// document describes them (documentation only: responses are serialized with JSON.stringify,
// src/app.ts, so these never change a byte that is sent).
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { ERRORS, type ErrorCode } from '../errors.js';

/** `T | null`; a `description` goes on the union, where the docs page shows it. */
export const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});

/**
 * What marks an addition to the original API in the OpenAPI document (API guide "Beyond the
 * original API"): spread into an operation's `OperationDoc` or an attribute's schema options,
 * `Type.String({ ...EXTENSION, description })`.
 */
export const EXTENSION = { 'x-hostplane-extension': true } as const;

/** `examples` of a schema: what the docs page shows. Request examples must be accepted (test/ops/openapi.test.ts). */
const withExample = (example: unknown) => (example === undefined ? {} : { examples: [example] });

/**
 * The PATCH envelope: `{"data":{"type":…,"id":…,"attributes":{…}}}` (API guide "Documents").
 * `example` is the body the docs show; it must be accepted by the API, for the object of the path
 * parameter's example.
 */
export const UpdateBody = <A extends TSchema>(type: string, attributes: A, example?: { id: string; attributes: Static<A> }) =>
  Type.Object(
    {
      data: Type.Object(
        {
          type: Type.String({ description: `must be "${type}"` }),
          id: Type.String({ description: 'must be the identifier in the URL' }),
          attributes,
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, ...withExample(example && { data: { type, id: example.id, attributes: example.attributes } }) },
  );

/**
 * The create envelope: `{"data":{"type":…,"attributes":{…}}}` (API guide "Documents"); `example` as
 * for UpdateBody.
 */
export const CreateBody = <A extends TSchema>(type: string, attributes: A, example?: Static<A>) =>
  Type.Object(
    {
      data: Type.Object(
        { type: Type.Literal(type), attributes },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, ...withExample(example && { data: { type, attributes: example } }) },
  );

/**
 * The `:id` path parameter of one object; `idParam('10002')` documents an example id (one of the
 * demo dataset). No length rules: an id that cannot exist answers 404 like any unknown id.
 */
export const idParam = (example?: string) => Type.Object({ id: Type.String(withExample(example)) });
export const IdParam = idParam();

/** A query parameter as the parser hands it over: one string, or an array when repeated. */
const QueryValue = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));

/**
 * Documents a list endpoint's query parameters in the OpenAPI document (API guide "Documents"); it
 * accepts any value and any other key, so parseListQuery stays the one place that judges them:
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

// ---- documents (OpenAPI components) ---------------------------------------------------------
// Links are absolute URLs built from the public base URL, with brackets left raw (API guide
// "Compatibility with existing clients"), so they carry no `format: uri` that a strict URI parser
// would then refuse.

const Link = (description: string) => Type.String({ description });
const SelfLinks = Type.Object({ self: Link('URL of this object') });
const DocumentLinks = Type.Object({ self: Link('URL of the request') });
const ListLinks = Type.Object(
  {
    self: Link('URL of the request, query string as sent'),
    first: Type.Optional(Link('first page (paged lists only)')),
    last: Type.Optional(Link('last page (paged lists only)')),
    prev: Type.Optional(Nullable(Type.String(), 'previous page, null on the first (paged lists only)')),
    next: Type.Optional(Nullable(Type.String(), 'next page, null on the last (paged lists only)')),
  },
  { description: '`first`, `last`, `prev` and `next` are there when the request named `page[number]` or `page[size]`' },
);
const ListMeta = Type.Object({
  total: Type.Integer({ minimum: 0, description: 'objects in the whole list, all pages' }),
  page: Type.Optional(
    Type.Object(
      { number: Type.Integer({ minimum: 1 }), size: Type.Integer({ minimum: 1 }), total_pages: Type.Integer({ minimum: 1 }) },
      { description: 'paged lists only' },
    ),
  ),
});

/** A string from a fixed list: `StringEnum(['pending', 'done'])` → `{"type":"string","enum":[…]}`. */
export const StringEnum = <V extends string[]>(values: readonly [...V], description?: string) =>
  Type.Enum(values, { type: 'string', ...(description ? { description } : {}) });

/** A timestamp attribute: ISO 8601 in UTC, e.g. `2026-11-22T03:51:28.686Z`. */
export const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/**
 * A to-one relationship: `{"data":{"type":"customer","id":"10001"}}`. `nullable`: data is null
 * when there is none; `related`: it also has `links.related`, the URL of that object.
 */
export const ToOne = (type: string, o: { nullable?: boolean; related?: boolean; description?: string } = {}) => {
  const identifier = Type.Object({ type: Type.Literal(type), id: Type.String() });
  return Type.Object(
    {
      data: o.nullable ? Nullable(identifier) : identifier,
      ...(o.related ? { links: Type.Object({ related: Link(`URL of the ${type}`) }) } : {}),
    },
    o.description ? { description: o.description } : {},
  );
};

/** A relationship given as a link only: `{"links":{"related":"<base>/domains?filter[package_id]=2"}}`. */
export const RelatedList = (description: string) => Type.Object({ links: Type.Object({ related: Link('URL of the filtered list') }) }, { description });

/** The OpenAPI components of one resource type, registered by readRoutes (addDocumentSchemas). */
export interface ResourceSchemas {
  /** Component name of the resource object, e.g. `Customer`; operation ids derive from it (getCustomer). */
  name: string;
  /** The JSON:API type, e.g. `customer`. */
  type: string;
  /** `Customer`: the resource object. */
  resource: TObject;
  /** `CustomerDocument`: `{"data":{…},"links":{"self":…}}`, the answer about one object. */
  document: TObject;
  /** `CustomerList`: `{"links":{…},"data":[…],"meta":{"total":…}}`, the answer of a list. */
  list: TObject;
}

/**
 * The resource object and its two documents, as the code builds them (jsonapi/document.ts) — key
 * order included: `resourceSchemas('Customer', 'customer', { attributes, relationships })`.
 * Without `links`, the object's links are `{self}`. `example` is what the docs page shows for it.
 */
export function resourceSchemas(
  name: string,
  type: string,
  parts: { attributes: TObject; relationships?: TObject; links?: TObject; description?: string; example?: unknown },
): ResourceSchemas {
  const resource = Type.Object(
    {
      type: Type.Literal(type),
      id: Type.String(),
      attributes: parts.attributes,
      ...(parts.relationships ? { relationships: parts.relationships } : {}),
      links: parts.links ?? SelfLinks,
    },
    { $id: name, ...(parts.description ? { description: parts.description } : {}), ...withExample(parts.example) },
  );
  const document = Type.Object({ data: Type.Ref(name), links: DocumentLinks }, { $id: `${name}Document`, description: `One ${type}` });
  const list = Type.Object(
    { links: ListLinks, data: Type.Array(Type.Ref(name)), meta: ListMeta },
    { $id: `${name}List`, description: `A list of ${type} objects` },
  );
  return { name, type, resource, document, list };
}

/**
 * Makes documents referable from route responses: Fastify's shared schemas become the
 * `components.schemas` of the OpenAPI document. Registering one twice is harmless.
 */
export function addDocumentSchemas(app: FastifyInstance, ...schemas: TSchema[]) {
  for (const s of schemas) {
    const id = (s as { $id?: string }).$id;
    if (id && !app.getSchema(id)) app.addSchema(s);
  }
}

/**
 * A JSON:API error document (API guide "Compatibility with existing clients"), as every failure
 * answers.
 */
export const ErrorDocument = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        id: Type.String({ description: 'stable error id, e.g. resource_not_found: match on it' }),
        status: Type.String({ description: 'the HTTP status, as a string' }),
        title: Type.String({ description: 'the same for every error of this id' }),
        detail: Type.Optional(Type.String({ description: 'what went wrong, for people; may change' })),
        source: Type.Optional(
          Type.Object({
            pointer: Type.Optional(Type.String({ description: 'JSON Pointer to the body member at fault, e.g. /data/attributes/ttl' })),
            parameter: Type.Optional(Type.String({ description: 'the query or path parameter at fault' })),
            header: Type.Optional(Type.String({ ...EXTENSION, description: 'the request header at fault, e.g. Idempotency-Key' })),
          }),
        ),
      }),
      { minItems: 1 },
    ),
    links: Type.Optional(Type.Object({ self: Link('URL of the request') })),
  },
  { $id: 'ErrorDocument', description: 'JSON:API error document' },
);

// ---- operations -----------------------------------------------------------------------------

/** When an error of this id happens, for every operation it applies to (see sharedErrors). */
type ErrorWhen = Partial<Record<ErrorCode, string>>;

const HEADERS: Partial<Record<number, Record<string, { type: 'string' | 'integer'; description: string }>>> = {
  202: { 'Content-Location': { type: 'string', description: 'URL of the queue-job that makes the change' } },
  401: { 'WWW-Authenticate': { type: 'string', description: 'Basic realm="API"' } },
  429: { 'Retry-After': { type: 'integer', description: 'seconds to wait before the next request' } },
  503: { 'Retry-After': { type: 'integer', description: 'when the store or a server the request needs was busy or unreachable: seconds to wait before repeating the request' } },
};

/** Methods whose request body the server reads (a DELETE may carry one: acme.sh sends a JSON type). */
const READS_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The errors every operation of this shape can answer: those of the shared hooks (authentication,
 * Accept negotiation, rate limits), of the router (a malformed or too long path), of the body
 * parser, of schema validation and of list query parsing.
 */
function sharedErrors(method: string, o: { params?: TSchema; querystring?: TSchema; body?: TSchema }): ErrorWhen {
  const body = READS_BODY.has(method);
  return {
    bad_request: body ? 'the URL or the JSON body is malformed, or the body nests too deeply' : 'the URL is malformed',
    ...(o.querystring ? { invalid_parameter: 'a query parameter is unknown or has a bad value; `source.parameter` names it' } : {}),
    unauthorized: 'credentials are missing or wrong, or the token was revoked',
    token_scope: 'the token is limited (read-only, to domains, to ACME challenges: API guide "Scoped tokens") and this request is outside that; `detail` names the limit',
    not_acceptable: '`Accept` names another version or vendor',
    ...(o.params ? { uri_too_long: 'a path segment is too long' } : {}),
    ...(body ? { payload_too_large: 'the body is larger than the server accepts', unsupported_media_type: 'the body is not sent as JSON' } : {}),
    ...(o.body ? { invalid_api_data: 'the body does not fit this operation, or a value is invalid; `source.pointer` names the member' } : {}),
    rate_limited: 'too many requests from this client address',
    too_many_errors: 'too many failed requests from this client address: blocked for a while',
    internal_error: 'an unexpected fault; it is logged with the request id (`x-request-id`)',
    service_unavailable: STORE_BUSY,
  };
}

/** Why any operation may answer 503 (src/db/unavailable.ts), beside an operation's own reasons. */
const STORE_BUSY = 'the data store, or a server the request needs, is busy or unreachable right now: repeat the request after `Retry-After` seconds';

/** How an operation takes part in safe retries (API guide "Safe retries"). */
type Conditional = 'read' | 'write';

const header = (description: string) => Type.Optional(Type.String({ ...EXTENSION, description }));
const IDEMPOTENCY_KEY = {
  'Idempotency-Key': header(
    'a key of your choice (1–255 visible ASCII characters, as a token or a quoted string) that makes a retry safe: a repeat of this request with it, by the same token within 24 hours (an operator setting), answers what the first answered and changes nothing again',
  ),
};
const IF_MATCH = { 'If-Match': header("412 `precondition_failed` unless the object's current ETag is one of these (or `*`)") };
const IF_NONE_MATCH = {
  'If-None-Match': header("on a read, 304 when the object's current ETag is one of these (or `*`); on a write, 412 then"),
};
const ETAG = { ETag: { type: 'string', description: 'the entity tag of the object as it is now; send it in If-Match to change it only while it stays so', ...EXTENSION } };

/** The request headers an operation documents: the Idempotency-Key of every write, the conditions of conditional ones. */
function conditionHeaders(method: string, conditional: Conditional | undefined, idempotent: boolean) {
  const write = method !== 'GET' && idempotent;
  const fields = { ...(write ? IDEMPOTENCY_KEY : {}), ...(conditional ? { ...IF_MATCH, ...IF_NONE_MATCH } : {}) };
  return Object.keys(fields).length ? Type.Object(fields) : undefined;
}

/** The errors of safe retries: a write's Idempotency-Key, and the conditions (of any write, and of conditional reads). */
function retryErrors(method: string, conditional: Conditional | undefined, idempotent: boolean): ErrorWhen {
  if (method === 'GET') {
    return conditional ? { invalid_header: 'If-Match or If-None-Match is malformed', precondition_failed: 'If-Match names none of the current entity tags' } : {};
  }
  if (!idempotent) {
    return {
      invalid_header: 'If-Match or If-None-Match is malformed; `source.header` names it',
      precondition_failed: 'If-Match names an entity tag, or If-None-Match is `*`: this operation has none, so the condition never holds',
    };
  }
  return {
    invalid_header: 'Idempotency-Key, If-Match or If-None-Match is malformed; `source.header` names it',
    idempotency_key_in_use: 'the first request with this Idempotency-Key is still being answered',
    precondition_failed: conditional
      ? 'the object changed since the entity tag in If-Match (or If-None-Match names its current one)'
      : 'If-Match names an entity tag, or If-None-Match is `*`: this operation has none, so the condition never holds',
    idempotency_key_reused: 'this Idempotency-Key was sent before with another request (method, path or body)',
  };
}

/** One response per status: the shared error document, its ids listed with when each happens. */
function errorResponses(when: ErrorWhen) {
  const byStatus = new Map<number, string[]>();
  // Catalogue order within a status, so the text is stable however the ids were gathered.
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const text = when[code];
    if (text === undefined) continue;
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), `- \`${code}\`: ${text}`]);
  }
  const out: Record<number, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    out[status] = {
      $ref: 'ErrorDocument',
      description: `${http.STATUS_CODES[status]}. Error ids:\n\n${byStatus.get(status)!.join('\n')}`,
      ...(HEADERS[status] ? { headers: HEADERS[status] } : {}),
    };
  }
  return out;
}

export interface OperationDoc {
  /** Stable camelCase name that generated clients use: `listCustomers`, `createDnsRecord`. */
  operationId: string;
  tags: [string];
  summary: string;
  description?: string;
  /** The one success answer: its status and the document it carries (a registered component); 204 carries none. */
  success: { status: 200 | 201 | 202; document: TObject; description: string } | { status: 204; description: string };
  /**
   * A second success, 202 with the same document and `Content-Location` naming a queue-job, and
   * when it is answered: a PATCH that answers 200 unless the change runs as a job.
   */
  accepted?: string;
  /** The failures particular to this operation, by error id, with when each happens. */
  errors?: ErrorWhen;
  /** `x-hostplane-extension: true`: the original API has no such operation (spread EXTENSION). */
  'x-hostplane-extension'?: true;
  /**
   * The operation reads (`read`: GET of one object) or changes (`write`: its PATCH and DELETE) an
   * object with an ETag, and decides If-Match and If-None-Match on it (src/jsonapi/conditional.ts).
   */
  conditional?: Conditional;
  /**
   * false: an Idempotency-Key is not honoured, because the answer holds a secret or opens a session
   * that must not be kept (the route sets `config: { idempotent: false }`, src/http/safe-retries.ts).
   */
  idempotent?: false;
  /** Who may call it, when not the API's usual credentials: `[]` for none (the panel's login). */
  security?: Record<string, string[]>[];
}

/**
 * The route schema of an API operation: its request schemas as given (they validate), and its
 * answers — the success document, and the error document for every status it can answer:
 * `app.patch('/customers/:id', { schema: operation('PATCH', { operationId: 'updateCustomer', …,
 * params, body, success: { status: 200, document: CustomerSchemas.document, description },
 * errors: { forbidden: '…' } }) }, handler)`.
 */
export function operation<S extends { params?: TSchema; querystring?: TSchema; body?: TSchema }>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  o: S & OperationDoc,
) {
  const { success, errors, conditional, idempotent, accepted, ...schema } = o;
  // The answer of a conditional read or PATCH carries the object's ETag.
  const tagged = conditional !== undefined && method !== 'DELETE';
  const successHeaders = { ...HEADERS[success.status], ...(tagged ? ETAG : {}) };
  const ok =
    success.status === 204
      ? { description: success.description, type: 'null' }
      : {
          $ref: (success.document as { $id?: string }).$id,
          description: success.description,
          ...(Object.keys(successHeaders).length ? { headers: successHeaders } : {}),
        };
  const notModified =
    conditional === 'read' ? { 304: { description: 'Not Modified: If-None-Match names the current entity tag; no body', headers: ETAG, type: 'null' } } : {};
  const headers = conditionHeaders(method, conditional, idempotent !== false);
  // Operation-specific texts win over the shared ones (e.g. what a 422 means for this path).
  return {
    ...schema,
    ...(headers ? { headers } : {}),
    response: {
      [success.status]: ok,
      ...(accepted && 'document' in success
        ? { 202: { $ref: (success.document as { $id?: string }).$id, description: accepted, headers: { ...HEADERS[202], ...(tagged ? ETAG : {}) } } }
        : {}),
      ...notModified,
      ...errorResponses({
        ...sharedErrors(method, o),
        ...retryErrors(method, conditional, idempotent !== false),
        ...errors,
        // A store that cannot answer is a reason on every operation, beside its own.
        ...(errors?.service_unavailable ? { service_unavailable: `${errors.service_unavailable}; or ${STORE_BUSY}` } : {}),
      }),
    } as Record<string, unknown>,
  };
}
