// The Fastify instance the route plugins receive: request params, query and body are typed from
// the route's TypeBox schemas, so handlers need no casts. Only the TYPES come from the provider;
// validation stays with the app's own Ajv (options in app.ts), so error documents do not change.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

export type { TypeBoxTypeProvider };

/**
 * What `app.withTypeProvider<TypeBoxTypeProvider>()` returns; the same object at run time.
 * `app.get('/x/:id', { schema: { params: IdParam } }, (request) => request.params.id)` → `string`.
 */
export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;
