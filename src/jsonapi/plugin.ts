// The HTTP side of JSON:API for every route: request content types (API guide "Versioning and
// content types"), Accept negotiation, error documents (API guide "Compatibility with existing
// clients", "Errors"), 404 and 405. No resource knowledge.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, AppErrors, ERRORS, type ErrorCode } from '../errors.js';
import { STORE_RETRY_AFTER_S, storeUnavailable } from '../db/unavailable.js';
import { namesJsonApi, negotiate } from './negotiate.js';
import { originForm, type LinkBuilder } from './document.js';
import { parseJsonBody } from './json-body.js';

/** Set when the negotiation hook has run: `jsonApi` then holds what namesJsonApi answers for the request. */
const NEGOTIATED = Symbol('negotiated');

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Answers `410 gone` with `detail` for every method on `path` and below it: an endpoint of the
     * original service that was switched off, whose detail names the replacement. Like an unknown
     * path, it needs no credentials. `app.retirePath('/getDomainStatus', 'Use …')`.
     */
    retirePath(path: string, detail: string): void;
  }
  interface FastifyRequest {
    /** Response is `application/vnd.api+json` (else `application/json`). */
    jsonApi: boolean;
    [NEGOTIATED]: boolean;
  }
  interface FastifyContextConfig {
    /** Operational routes (health, metrics, docs) skip negotiation, auth and the JSON:API body rules. */
    infra?: boolean;
  }
}

export const JSON_TYPES = ['application/json', 'application/vnd.api+json'];

/**
 * The response content type (API guide "Versioning and content types"). Computed from the request
 * headers, not from a hook's result, so errors raised before negotiation ran (429 from the limiter,
 * 406 itself) get it too.
 */
const responseType = (request: FastifyRequest) =>
  (request[NEGOTIATED] ? request.jsonApi : namesJsonApi(request.headers.accept, request.headers['content-type']))
    ? 'application/vnd.api+json'
    : 'application/json';


interface ErrorObject {
  id: ErrorCode;
  status: string;
  title: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string };
}

const toObject = (e: AppError): ErrorObject => ({
  id: e.code,
  status: String(e.status),
  title: e.title,
  ...(e.detail ? { detail: e.detail } : {}),
  ...(e.source ? { source: e.source } : {}),
});

/**
 * Sends an error document (API guide "Compatibility with existing clients") for one or several
 * errors of one status.
 */
export function sendErrors(request: FastifyRequest, reply: FastifyReply, links: LinkBuilder, errors: AppError[]) {
  const first = errors[0];
  if (first.headers) reply.headers(first.headers);
  // Serialized here, so the content type stays exact (no charset appended) and the request id is
  // named even where no hook runs (the router's own errors, answered through frameworkErrors).
  reply.code(first.status).type(responseType(request)).serializer(JSON.stringify).header('x-request-id', request.id);
  return reply.send({ errors: errors.map(toObject), links: { self: links.request(request.url) } });
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Field errors listed in one answer, at most; a client fixes those and learns of the rest. */
export const MAX_FIELD_ERRORS = 20;

/** Turns schema-validation failures into field errors with JSON pointers (the first MAX_FIELD_ERRORS). */
function validationErrors(error: FastifyError & { validation: AjvError[]; validationContext?: string }): AppError[] {
  const where = error.validationContext ?? 'body';
  const out = new Map<string, AppError>();
  for (const v of error.validation) {
    // A body with thousands of unknown keys would otherwise get an answer many times its size.
    if (out.size === MAX_FIELD_ERRORS) break;
    let pointer = v.instancePath || '';
    let detail: string;
    if (v.keyword === 'additionalProperties') {
      pointer += `/${String(v.params.additionalProperty)}`;
      detail = `Unknown or read-only attribute "${String(v.params.additionalProperty)}".`;
    } else if (v.keyword === 'required') {
      pointer += `/${String(v.params.missingProperty)}`;
      detail = `"${String(v.params.missingProperty)}" is required.`;
    } else if (v.keyword === 'anyOf' || v.keyword === 'if') {
      continue; // its branches report the specific reasons
    } else if (v.keyword === 'const' || v.keyword === 'enum') {
      const allowed = (v.params.allowedValues ?? [v.params.allowedValue]) as unknown[];
      detail = `Must be one of: ${allowed.map((a) => JSON.stringify(a)).join(', ')}.`;
    } else {
      detail = `${v.message ?? 'is invalid'}`.replace(/^must/, 'Must') + '.';
    }
    const key = pointer;
    if (out.has(key)) continue;
    if (where === 'body') out.set(key, new AppError('invalid_api_data', detail, { pointer: pointer || '/' }));
    else out.set(key, new AppError('invalid_parameter', detail, { parameter: pointer.replace(/^\//, '') || where }));
  }
  if (out.size === 0) out.set('', new AppError('invalid_api_data', 'The document does not match the schema.', { pointer: '/' }));
  return [...out.values()];
}

const UNAVAILABLE = `The service cannot answer this request right now (its data store, or a server it needs, is busy or unreachable). Repeat it in ${STORE_RETRY_AFTER_S} seconds (Retry-After).`;

function mapError(error: unknown): AppError[] | null {
  if (error instanceof AppError) return [error];
  if (error instanceof AppErrors) return error.errors;
  const e = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (e?.validation) return validationErrors(e as FastifyError & { validation: AjvError[] });
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return [new AppError('unsupported_media_type', `Send request bodies as ${JSON_TYPES.join(' or ')}.`)];
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [new AppError('payload_too_large', 'The request body is too large.')];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return [new AppError('bad_request', e.message)];
  }
  const status = (e as { statusCode?: number })?.statusCode;
  if (status && status >= 400 && status < 500) {
    const code = (Object.keys(ERRORS) as ErrorCode[]).find((k) => ERRORS[k].status === status) ?? 'bad_request';
    return [new AppError(code, e.message)];
  }
  return null;
}

function routeRegex(url: string): RegExp {
  const pattern = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${pattern}$`);
}

/** Registers parsers, hooks and handlers on the root instance (not encapsulated). */
/**
 * Records every route as it is added, for 405 answers; call it before any route is registered:
 * `const routes = trackRoutes(app); … registerJsonApi(app, { vendor, links, routes })`.
 */
export function trackRoutes(app: FastifyInstance) {
  const routes: { method: string; re: RegExp }[] = [];
  app.addHook('onRoute', (r) => {
    // A route of other hosts only (a Host constraint) is no path of the API's own host.
    if (r.constraints?.host !== undefined) return;
    for (const m of [r.method].flat()) if (m !== 'HEAD') routes.push({ method: m, re: routeRegex(r.url ?? r.path) });
  });
  return routes;
}

export function registerJsonApi(app: FastifyInstance, opts: { vendor: string; links: LinkBuilder; routes: ReturnType<typeof trackRoutes> }) {
  const { routes } = opts;
  const { links } = opts;
  app.decorateRequest('jsonApi', false);
  app.decorateRequest(NEGOTIATED, false);
  const retired = new Map<string, string>();
  app.decorate('retirePath', (path: string, detail: string) => void retired.set(path.replace(/\/+$/, ''), detail));
  /** The detail of the retired endpoint `path` is, or is below. */
  const retiredDetail = (path: string) => {
    for (const [at, detail] of retired) if (path === at || path.startsWith(`${at}/`)) return detail;
    return undefined;
  };

  // JSON bodies only; an empty body is allowed (acme.sh sends a JSON Content-Type on DELETE, API
  // guide "Compatibility with existing clients").
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(String(body)));
    } catch (err) {
      done(err as AppError, undefined);
    }
  });

  // Node's own check answers a bare 400 (the server is built with requireHostHeader: false), so
  // the rule of RFC 9112 §3.2 is applied here, with an error document.
  // Hooks that never wait are written in callback style: Fastify then runs them without a promise
  // and a turn of the microtask queue each (docs/decisions/0012-request-path.md).
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      done(new AppError('bad_request', 'An HTTP/1.1 request must have a Host header.'));
      return;
    }
    done();
  });

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config?.infra) return done();
    const n = negotiate(request.headers.accept, request.headers['content-type'], opts.vendor);
    if (!n) {
      done(new AppError(
        'not_acceptable',
        `Accept names no supported representation; use application/vnd.${opts.vendor}.v1+json or application/vnd.api+json.`,
      ));
      return;
    }
    request.jsonApi = n.jsonApi;
    request[NEGOTIATED] = true;
    done();
  });

  // Bodies of API routes (successes and error documents) take the negotiated type, exactly: no
  // charset parameter, whichever path produced the body.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.config?.infra) return done(null, payload);
    const type = String(reply.getHeader('content-type') ?? '');
    if (/^application\/(json|vnd\.api\+json)\s*(;|$)/i.test(type)) reply.header('content-type', responseType(request));
    done(null, payload);
  });

  app.setErrorHandler((error, request, reply) => {
    const mapped = mapError(error);
    if (mapped) return sendErrors(request, reply, links, mapped);
    if (storeUnavailable(error)) {
      request.log.error({ err: error }, 'the store (or a server the request needs) cannot answer now');
      reply.header('Retry-After', String(STORE_RETRY_AFTER_S));
      return sendErrors(request, reply, links, [new AppError('service_unavailable', UNAVAILABLE)]);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendErrors(request, reply, links, [new AppError('internal_error', 'An unexpected error occurred; it has been logged.')]);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = originForm(request.url).split('?')[0].replace(/\/{2,}/g, '/');
    const gone = retiredDetail(path);
    if (gone) return sendErrors(request, reply, links, [new AppError('gone', gone)]);
    const allowed = [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))];
    // CONNECT asks for a tunnel, which nothing here offers, whatever its target (usually host:port,
    // naming no resource: then Allow is empty, "no method").
    if (allowed.length || request.method === 'CONNECT') {
      reply.header('Allow', allowed.join(', '));
      const detail = allowed.length ? `Use ${allowed.join(', ')} on this path.` : 'This server is not a proxy; CONNECT is not supported.';
      return sendErrors(request, reply, links, [new AppError('method_not_allowed', detail)]);
    }
    return sendErrors(request, reply, links, [new AppError('resource_not_found', 'No such endpoint.')]);
  });
}
