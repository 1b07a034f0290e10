/**
 * A fetch for outbound requests that enforces a {@link DestinationPolicy} at connect time.
 * The built-in fetch resolves names inside its own connection pool, with no hook to see the
 * address it connects to; node:http and node:https accept a `lookup` per request, so the
 * policy checks exactly the address the socket uses. Redirects are never followed (a 3xx is
 * handed back as it is), so a redirect cannot lead past the check either.
 *
 * It answers a standard `Response`, decompressing gzip, deflate and brotli bodies as fetch
 * does, so callers read it with the same bounded readers. Connections are not pooled.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { effectivePort, type DestinationPolicy } from './destinationPolicy.js';
import { unbracket } from './privateNetworks.js';

/** What {@link guardedFetch} sends. */
export interface OutboundInit {
  method?: string;
  headers?: Headers | Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Only `manual` is supported: redirects are never followed. */
  redirect?: 'manual';
}

/** The fetch signature outbound callers use; the global fetch also fits it. */
export type OutboundFetch = (url: URL, init: OutboundInit) => Promise<Response>;

const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);

function decoded(message: IncomingMessage): Readable {
  const encoding = (message.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (decoder === undefined) return message;
  message.on('error', (error) => decoder.destroy(error));
  return message.pipe(decoder);
}

function toResponse(message: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (let index = 0; index + 1 < message.rawHeaders.length; index += 2) {
    headers.append(message.rawHeaders[index] ?? '', message.rawHeaders[index + 1] ?? '');
  }
  const status = message.statusCode ?? 0;
  if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
    message.resume();
    return new Response(null, { status, headers });
  }
  const body = Readable.toWeb(decoded(message)) as ReadableStream<Uint8Array>;
  return new Response(body, { status, statusText: message.statusMessage, headers });
}

/**
 * A fetch that refuses destinations `policy` refuses: IP literals before anything is sent,
 * host names inside the socket's DNS lookup. A refusal rejects with the policy's
 * `DestinationRefusedError` as the `cause` of a `TypeError`, as fetch reports network errors.
 */
export function guardedFetch(policy: DestinationPolicy): OutboundFetch {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      // as fetch does: an aborted request rejects with the signal's reason
      const fail = (error: unknown) => {
        const aborted = init.signal?.aborted === true;
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- fetch rejects with the signal's reason, whatever it is
        reject(aborted ? init.signal?.reason : new TypeError('fetch failed', { cause: error }));
      };
      const literal = policy.literalRefusal(url);
      if (literal !== undefined) {
        fail(literal);
        return;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        fail(new Error(`unsupported scheme ${url.protocol}`));
        return;
      }
      const method = (init.method ?? 'GET').toUpperCase();
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      headers['accept-encoding'] ??= 'gzip, deflate, br';
      const port = effectivePort(url);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send({
        protocol: url.protocol,
        host: unbracket(url.hostname),
        port,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        agent: false,
        lookup: policy.lookup(url.hostname, port),
        signal: init.signal,
      });
      request.on('error', fail);
      request.on('response', (message) => {
        try {
          resolve(toResponse(message, method));
        } catch (error) {
          message.destroy();
          fail(error);
        }
      });
      request.end(init.body);
    });
}
