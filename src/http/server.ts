// The Node HTTP server under Fastify, set up so that every request that reaches it gets the
// application's answer, a JSON:API document, instead of Node's own reaction (issue 7 item 2).
import http from 'node:http';
import type { Socket } from 'node:net';

/**
 * `http.createServer(options, handler)`, except that:
 * - an HTTP/1.1 request without Host reaches the application, which answers 400 with an error
 *   document (Node would write a bare 400 itself);
 * - a client that half-closes its socket after sending the request (shutdown(SHUT_WR)) still gets
 *   the answer: Node would end the socket as soon as the client's FIN arrives, before an answer
 *   that waits on the database is written;
 * - CONNECT reaches the application, which answers 405 (Node would destroy the socket unanswered).
 */
export function createHttpServer(options: http.ServerOptions, handler: http.RequestListener, idleTimeoutMs: number): http.Server {
  const server = http.createServer({ ...options, requireHostHeader: false }, handler);
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
