// The Node HTTP server under Fastify, set up so that every request that reaches it gets the
// application's answer, a JSON:API document, instead of Node's own reaction.
import http from 'node:http';
import type { Socket } from 'node:net';

/** What may still come after an answer that closes the connection before its body was read… */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024;
/** …and for how long, before the socket is closed anyway. */
export const LINGER_MAX_MS = 5_000;

/**
 * `http.createServer(options, handler)`, except that:
 * - an HTTP/1.1 request without Host reaches the application, which answers 400 with an error
 *   document (Node would write a bare 400 itself);
 * - an answer given before the request's body has arrived (413, or 401 for a refused token) closes
 *   the connection: Node would otherwise read the rest of the body, however long, to keep the
 *   connection for a next request. A client that is still sending gets the answer: up to
 *   LINGER_MAX_BYTES more are read and dropped (lingering close) instead of a reset, which would
 *   make the client's send fail (EPIPE) before it reads;
 * - a client that half-closes its socket after sending the request (shutdown(SHUT_WR)) still gets
 *   the answer: Node would end the socket as soon as the client's FIN arrives, before an answer
 *   that waits on the database is written;
 * - CONNECT reaches the application, which answers 405 (Node would destroy the socket unanswered).
 */
export function createHttpServer(options: http.ServerOptions, handler: http.RequestListener, idleTimeoutMs: number): http.Server {
  const server = http.createServer({ ...options, requireHostHeader: false }, (req, res) => {
    // Only a request with a body can be answered before it has all arrived.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) lingerIfUnread(req, res);
    handler(req, res);
  });
  // A socket with no traffic either way for this long is destroyed: a client that stops reading
  // its answers (pipelining requests and never draining) cannot keep them queued in memory.
  // Fastify's connectionTimeout does this only for servers it creates itself, not ours.
  server.setTimeout(idleTimeoutMs);
  // Undocumented but stable since Node 0.x (_http_server.js socketOnEnd): with it, the client's
  // FIN marks the response in flight as the last one, and the socket closes once it is written.
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connect', (req: http.IncomingMessage, socket: Socket) => answerConnect(req, socket, handler));
  return server;
}

/**
 * Node has detached its parser and listeners from a CONNECT's socket and hands it over as a
 * tunnel; the application answers on it like on any request, and the socket closes after.
 */
function answerConnect(req: http.IncomingMessage, socket: Socket, handler: http.RequestListener) {
  // Node no longer listens for errors or idleness on this socket: without these, a reset would
  // be an uncaught 'error' and a silent client would hold the socket.
  socket.on('error', () => socket.destroy());
  socket.on('timeout', () => socket.destroy());
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.on('finish', () => {
    res.detachSocket(socket);
    socket.destroySoon();
  });
  handler(req, res);
}

/**
 * When `res` is complete while `req`'s body is still arriving and Node is about to close the
 * connection, it closes with unread data, which the kernel turns into a reset: the client, still
 * sending, sees EPIPE or ECONNRESET and may never read the answer. Instead the answer is followed by
 * a FIN while Node's parser reads the rest of the body and drops it (the request was dumped), and
 * the socket is closed once the body is complete, LINGER_MAX_BYTES more were read, or after
 * LINGER_MAX_MS.
 */
function lingerIfUnread(req: http.IncomingMessage, res: http.ServerResponse) {
  // Before the headers are written, so they say Connection: close.
  const writeHead = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (!req.complete) this.shouldKeepAlive = false;
    return writeHead.apply(this, args);
  } as typeof writeHead;
  res.once('prefinish', () => {
    if (req.complete) return;
    // Node ends a connection it does not keep (Connection: close) with socket.destroySoon() once
    // the answer is written; on this socket that lingers instead.
    const socket = req.socket;
    socket.destroySoon = () => linger(req, socket);
  });
}

/** How often a lingering socket's bytes are counted (the parser reads them, not a listener here). */
const LINGER_CHECK_MS = 50;

function linger(req: http.IncomingMessage, socket: Socket) {
  socket.end();
  const until = Date.now() + LINGER_MAX_MS;
  const limit = socket.bytesRead + LINGER_MAX_BYTES;
  const stop = () => {
    clearInterval(check);
    socket.destroy();
  };
  const check = setInterval(() => {
    if (Date.now() >= until || socket.bytesRead >= limit) stop();
  }, LINGER_CHECK_MS);
  // The whole body has arrived: nothing is left unread, so closing sends no reset.
  req.once('end', stop);
  socket.once('close', () => clearInterval(check));
  socket.resume();
}
