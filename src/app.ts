// buildApp(config, deps) → a Fastify instance with every plugin and resource registered
// explicitly. It never listens; `serve` and the tests decide that.
import http from 'node:http';
import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino from 'pino';
import type { Config } from './config.js';
import type { Store } from './db/index.js';
import { LinkBuilder } from './jsonapi/document.js';
import { registerJsonApi, sendErrors, trackRoutes } from './jsonapi/plugin.js';
import { AppError, ERRORS, type ErrorCode } from './errors.js';
import { registerAuth } from './auth/plugin.js';
import { limitRouterError, registerLimits, type Limiter } from './limits/plugin.js';
import { registerOps } from './ops/plugin.js';
import { registerResources } from './resources/index.js';
import { serviceDeps } from './resources/service-deps.js';
import type { TypeBoxTypeProvider } from './jsonapi/typed-app.js';
import { createHttpServer } from './http/server.js';
import { redactUrl } from './http/log-url.js';
import { registerSafeRetries } from './http/safe-retries.js';
import { registerPanel } from './http/panel.js';
import { registerAuditTrail } from './resources/audit-events/audit-events.recorder.js';

export interface AppDeps {
  store: Store;
  /** Rate-limit and error-block state; in memory unless a shared (Redis) one is given. */
  limiter: Limiter;
  /** Where log lines go (tests capture them, written as they are logged); default stdout, asynchronously (stdoutLog). */
  logStream?: NodeJS.WritableStream;
  /** The clock of the autoresponder's dates (tests stand on either side of a Berlin midnight); default the system's. */
  now?: () => Date;
  /** Where the built customer panel is (src/http/panel.ts); default the repository's dist/panel. */
  panelDir?: string;
}

/**
 * Log lines to stdout without blocking a request (docs/decisions/0012-request-path.md): pino's
 * asynchronous destination appends a line to a buffer and writes what has gathered in the
 * background, one write for many lines under load, instead of a blocking write(2) per line (pino's
 * default for stdout). What is still buffered when the process exits, through process.exit after a
 * signal (src/cli/serve.ts) or a crash, pino writes synchronously on 'exit'. One per process: the
 * apps of a process share stdout, and each destination would flush on exit on its own.
 */
let stdoutLog: pino.DestinationStream | undefined;
const stdoutDestination = () => (stdoutLog ??= pino.destination({ dest: 1, sync: false }));

// A domain name is at most 253 characters, an availability check names up to 10 of them.
const MAX_PARAM_LENGTH = 10 * 254;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const links = new LinkBuilder(config.publicBaseUrl);
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Tokens and passwords never reach a log line: headers are not logged, and in case a
      // serializer changes, these paths are redacted.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
      // Should Fastify log a request itself (its default fields), the URL is redacted like ours.
      serializers: {
        req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }),
      },
      stream: deps.logStream ?? stdoutDestination(),
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    },
    // One line per request (at completion) instead of Fastify's two: half the logging cost.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy ?? false,
    bodyLimit: config.http.bodyLimit,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreDuplicateSlashes: true },
    // Slow clients are cut off in seconds: the checks run every second, not every 30 s. Every
    // request that reaches the server is answered by the application (src/http/server.ts).
    serverFactory: (handler) =>
      createHttpServer(
        {
          requestTimeout: config.http.requestTimeoutMs,
          headersTimeout: config.http.headersTimeoutMs,
          keepAliveTimeout: config.http.keepAliveTimeoutMs,
          connectionsCheckingInterval: 1000,
        },
        handler,
        config.http.requestTimeoutMs,
      ),
    // Errors the router raises before any hook runs still answer as JSON:API documents.
    frameworkErrors: (error, request, reply) => {
      const e = error as { code?: string };
      const appError =
        e.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError('uri_too_long', 'A path segment is too long.')
          : new AppError('bad_request', e.code === 'FST_ERR_BAD_URL' ? 'The URL is malformed.' : 'The request cannot be routed.');
      // They still spend the client's budget and count as errors (docs/decisions/0002).
      // No hook runs for them, so their request line is logged here (not awaiting the reply,
      // whose promise rejects when the client resets).
      void limitRouterError(deps.limiter, request, reply, appError).then((e) => {
        sendErrors(request, reply, links, [e]);
        logRequest(request, reply);
      });
    },
    clientErrorHandler: (err, socket) => clientError(err as NodeJS.ErrnoException, socket),
    // The extension mark (src/jsonapi/schema.ts EXTENSION) may stand in request schemas too: an annotation, not a rule.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true, keywords: ['x-hostplane-extension'] } },
  });

  // Response schemas document the API; the bytes come from JSON.stringify of documents whose key
  // order we control (API guide "Compatibility with existing clients"), so nothing is silently
  // dropped or reordered.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Callback style: these never wait (src/jsonapi/plugin.ts says why).
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    logRequest(request, reply);
    done();
  });

  const routes = trackRoutes(app);
  await registerOps(app, { config, store: deps.store });
  registerPanel(app, { dir: deps.panelDir });
  registerLimits(app, { limiter: deps.limiter, links });
  registerJsonApi(app, { vendor: config.apiVendor, links, routes });
  registerAuth(app, deps.store.db);
  registerSafeRetries(app, { store: deps.store, config });
  registerAuditTrail(app, { store: deps.store, config });
  // Route handlers get params, query and body typed from their schemas (types only; Ajv validates).
  registerResources(app.withTypeProvider<TypeBoxTypeProvider>(), serviceDeps(deps.store, config, deps.now), links);
  return app;
}

/** The one log line of a request, at completion. */
function logRequest(request: FastifyRequest, reply: FastifyReply) {
  request.log.info(
    // A query parameter may carry a credential (?access_token=…): its value never reaches a log.
    { method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: request.ip },
    'request',
  );
}

/**
 * Connection-level failures (a slow client cut off by the timeouts, oversized headers, a request
 * the HTTP parser rejects) answer with a JSON:API error document before the socket closes.
 */
function clientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : err.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'bad_request';
  const { status, title } = ERRORS[code];
  const body = JSON.stringify({ errors: [{ id: code, status: String(status), title }] });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
