/**
 * Request bodies: JSON is parsed here rather than by fastify's default parser so the exact
 * bytes stay available for device signatures, and so a body nested deeper than
 * {@link MAX_DEPTH} is refused before `JSON.parse` recurses into it. Keys that could
 * pollute prototypes (`__proto__`, `constructor.prototype`) are refused too. Binary bodies
 * (`application/octet-stream`, `application/wasm`) are kept as they came. Every parser here
 * keeps the exact bytes: those are the only bodies a device signature can cover, whatever the
 * media type (route.ts refuses a signed request with another one).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Problem } from './problem.js';

/** Deepest nesting of arrays and objects a body may have. */
export const MAX_DEPTH = 32;

/** Nesting depth of JSON text, ignoring brackets inside strings. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

const POLLUTING = /"(?:__proto__|prototype)"\s*:/;
/** A `\u0000` escape that is not itself escaped: PostgreSQL text and jsonb cannot hold NUL. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/i;

/**
 * JSON media types (`application/json`, `application/…+json`), bare or with the one charset
 * JSON has (RFC 8259: UTF-8). fastify matches a parser's pattern against the whole header
 * with its parameters, so without the optional part `application/json; charset=utf-8` — what
 * many HTTP clients send — would be a 415. Another charset still is.
 */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json(?:; ?charset="?utf-8"?)?$/i;

/** Binary media types kept as they came. */
const BINARY_MEDIA_TYPES = ['application/octet-stream', 'application/wasm'] as const;
const BINARY_MEDIA_TYPE = /^application\/(?:octet-stream|wasm)(?:\s*;.*)?$/i;

/** Whether a body of `contentType` is parsed here, its exact bytes kept on `request.rawBody`. */
export function keepsRawBody(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return JSON_MEDIA_TYPE.test(contentType) || BINARY_MEDIA_TYPE.test(contentType);
}

/** Whether a request's headers announce a body (a non-zero length, or a chunked one). */
export function declaresBody(headers: {
  'content-length'?: string | undefined;
  'transfer-encoding'?: string | undefined;
}): boolean {
  const length = headers['content-length'];
  return (
    headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0')
  );
}

/** Parse JSON request bodies, keeping the raw bytes on `request.rawBody`. */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(
    JSON_MEDIA_TYPE,
    { parseAs: 'buffer' },
    (
      request: FastifyRequest,
      body: Buffer,
      done: (error: Error | null, value?: unknown) => void,
    ) => {
      (request as FastifyRequest & { rawBody?: Buffer }).rawBody = body;
      const text = body.toString('utf8');
      if (text.trim() === '')
        return done(new Problem(400, 'MALFORMED_JSON', 'the request body is empty'));
      if (jsonDepth(text) > MAX_DEPTH)
        return done(
          new Problem(
            400,
            'BODY_TOO_DEEP',
            `the request body nests deeper than ${MAX_DEPTH} levels`,
          ),
        );
      if (POLLUTING.test(text))
        return done(new Problem(400, 'FORBIDDEN_KEY', 'the request body uses a forbidden key'));
      if (NUL_ESCAPE.test(text))
        return done(
          new Problem(400, 'NUL_CHARACTER', 'the request body contains a NUL character (\\u0000)'),
        );
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new Problem(400, 'MALFORMED_JSON', 'the request body is not valid JSON'));
      }
    },
  );
  app.addContentTypeParser(
    [...BINARY_MEDIA_TYPES],
    { parseAs: 'buffer' },
    (
      request: FastifyRequest,
      body: Buffer,
      done: (error: Error | null, value?: unknown) => void,
    ) => {
      (request as FastifyRequest & { rawBody?: Buffer }).rawBody = body;
      done(null, body);
    },
  );
}
