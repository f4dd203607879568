// A minimal FastCGI client (responder role) for the PHP-FPM tests
// (docs/decisions/0008-web-servers.md): asks a pool's socket to run one PHP file as a web server
// would, so CI needs no cgi-fcgi. One request per connection, no keep-alive, no request body.
import net from 'node:net';

const VERSION = 1;
const BEGIN_REQUEST = 1;
const END_REQUEST = 3;
const PARAMS = 4;
const STDIN = 5;
const STDOUT = 6;
const STDERR = 7;
const RESPONDER = 1;
const REQUEST_ID = 1;

export interface FastcgiResponse {
  /** From the `Status:` header the script sent, 200 without one. */
  status: number;
  /** Header names lower-cased; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: string;
  /** What PHP wrote to the FastCGI error stream (e.g. "Primary script unknown"). */
  stderr: string;
  /** The application status of END_REQUEST (PHP's exit status). */
  appStatus: number;
}

function record(type: number, content: Buffer): Buffer {
  const padding = (8 - (content.length % 8)) % 8;
  const header = Buffer.alloc(8);
  header.writeUInt8(VERSION, 0);
  header.writeUInt8(type, 1);
  header.writeUInt16BE(REQUEST_ID, 2);
  header.writeUInt16BE(content.length, 4);
  header.writeUInt8(padding, 6);
  return Buffer.concat([header, content, Buffer.alloc(padding)]);
}

/** A stream (PARAMS, STDIN) as records of at most 65535 bytes, ended by an empty record. */
function stream(type: number, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += 0xffff) out.push(record(type, data.subarray(i, i + 0xffff)));
  out.push(record(type, Buffer.alloc(0)));
  return out;
}

function pairLength(n: number): Buffer {
  if (n < 128) return Buffer.from([n]);
  const b = Buffer.alloc(4);
  b.writeUInt32BE((n | 0x80000000) >>> 0);
  return b;
}

function encodeParams(params: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(params)) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    parts.push(pairLength(n.length), pairLength(v.length), n, v);
  }
  return Buffer.concat(parts);
}

function parseOutput(stdout: Buffer): { status: number; headers: Record<string, string>; body: string } {
  const text = stdout.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? text : text.slice(0, end);
  const body = end < 0 ? '' : text.slice(end).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const status = headers.status ? Number.parseInt(headers.status, 10) : 200;
  return { status, headers, body };
}

/**
 * Runs `scriptFilename` through the FastCGI socket at `socketPath` as a GET:
 * `await fastcgiGet('/srv/state/php/8.2/u1.sock', '/srv/www/u1/index.php')` → { status: 200, body: '8.2.36', … }.
 */
export function fastcgiGet(
  socketPath: string,
  scriptFilename: string,
  opts: { query?: string; params?: Record<string, string>; timeoutMs?: number } = {},
): Promise<FastcgiResponse> {
  const scriptName = '/' + scriptFilename.split('/').pop();
  const query = opts.query ?? '';
  const params: Record<string, string> = {
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    SERVER_SOFTWARE: 'hostplane-test',
    REQUEST_METHOD: 'GET',
    SCRIPT_FILENAME: scriptFilename,
    SCRIPT_NAME: scriptName,
    REQUEST_URI: scriptName + (query ? `?${query}` : ''),
    DOCUMENT_URI: scriptName,
    QUERY_STRING: query,
    DOCUMENT_ROOT: scriptFilename.slice(0, scriptFilename.lastIndexOf('/')) || '/',
    SERVER_NAME: 'localhost',
    SERVER_PORT: '80',
    REMOTE_ADDR: '127.0.0.1',
    REMOTE_PORT: '40000',
    HTTP_HOST: 'localhost',
    ...opts.params,
  };
  const begin = Buffer.alloc(8);
  begin.writeUInt16BE(RESPONDER, 0);
  const request = Buffer.concat([
    record(BEGIN_REQUEST, begin),
    ...stream(PARAMS, encodeParams(params)),
    ...stream(STDIN, Buffer.alloc(0)),
  ]);

  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let buffered = Buffer.alloc(0);
    let settled = false;
    const finish = (err: Error | null, res?: FastcgiResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(res!);
    };
    const timer = setTimeout(
      () => finish(new Error(`FastCGI request to ${socketPath} got no END_REQUEST within ${opts.timeoutMs ?? 10_000} ms`)),
      opts.timeoutMs ?? 10_000,
    );
    socket.on('connect', () => socket.write(request));
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error(`FastCGI connection to ${socketPath} closed before END_REQUEST`)));
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 8) {
        const type = buffered.readUInt8(1);
        const length = buffered.readUInt16BE(4);
        const padding = buffered.readUInt8(6);
        if (buffered.length < 8 + length + padding) break;
        const content = buffered.subarray(8, 8 + length);
        buffered = buffered.subarray(8 + length + padding);
        if (type === STDOUT) stdout.push(Buffer.from(content));
        else if (type === STDERR) stderr.push(Buffer.from(content));
        else if (type === END_REQUEST) {
          const out = parseOutput(Buffer.concat(stdout));
          finish(null, { ...out, stderr: Buffer.concat(stderr).toString('utf8'), appStatus: content.readUInt32BE(0) });
          return;
        }
      }
    });
  });
}
