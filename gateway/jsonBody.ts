/**
 * Request bodies: JSON is parsed here rather than by fastify's default parser so the exact
 * bytes stay available for device signatures, and so a body nested deeper than
 * {@link MAX_DEPTH} is refused before `JSON.parse` recurses into it. Keys that could
 * pollute prototypes (`__proto__`, `constructor.prototype`) are refused too.
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

/** Parse JSON request bodies, keeping the raw bytes on `request.rawBody`. */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(
    /^application\/(?:[\w.+-]+\+)?json$/,
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
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new Problem(400, 'MALFORMED_JSON', 'the request body is not valid JSON'));
      }
    },
  );
  app.addContentTypeParser(
    'application/octet-stream',
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
