/**
 * Declaring a route: method, URL, who may call it, and zod schemas for its parameters,
 * query, body and response. The declaration authenticates and authorizes the caller,
 * validates every input (problem+json on failure), documents the operation in the OpenAPI
 * document, and sends what the handler returns as JSON. A handler that answers itself
 * (304, binary bodies, WebSocket) returns the `reply`.
 *
 * The caller is checked from the headers before the body is read (an `onRequest` hook): a
 * request without valid credentials is answered 401 having cost the server no more than the
 * socket's first chunks, and the connection is closed rather than drained (server.ts). Only
 * a device's signature, which covers the body's hash, waits for the body; a signed body must
 * be one whose exact bytes the gateway keeps (jsonBody.ts), else it is a 415. Public routes
 * read at most {@link PUBLIC_BODY_LIMIT} unless they declare otherwise.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { admitUser } from './auth/assignedRoles.js';
import { authenticateHeaders, verifyDeviceBody, type HeaderCheck } from './auth/authenticate.js';
import { requireRole, type Principal, type UserRole } from './auth/principal.js';
import type { GatewayContext } from './context.js';
import type { DocumentedHeader, DocumentedResponse } from './openapi.js';
import { declaresBody, keepsRawBody } from './jsonBody.js';
import { Problem } from './problem.js';
import { parsePart } from './validate.js';

/**
 * Longest path parameter a route takes (find-my-way's default is 100). Policy names and
 * configuration scope keys may be 200 characters: with the default, such a resource could be
 * created but never read, changed or deleted through its URL.
 */
export const MAX_PATH_PARAMETER_LENGTH = 512;

/**
 * Largest body of a public route that declares no limit (bytes): anyone may send one, so it
 * is kept small. The registration, the only public route with a body, needs a few hundred.
 */
const PUBLIC_BODY_LIMIT = 16 * 1024;

/** Methods whose body fastify reads when it has a content type (GET and HEAD bodies never are). */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Who may call a route. */
export type Access =
  | { public: true }
  /** Operators with one of `roles`; devices too when `devices` (the handler checks ownership). */
  | { roles: readonly UserRole[]; devices?: boolean };

/** A route declaration. */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tags: readonly string[];
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body as documented, when `body` normalises its input first (z.preprocess hides that)
   * or the handler parses it itself.
   */
  documentedBody?: z.ZodType;
  /** Request headers the route reads (lower-case names; documented as header parameters). */
  headers?: z.ZodType;
  response?: z.ZodType;
  /** Media types of a success answer that is not JSON (the handler sends it itself). */
  mediaTypes?: readonly string[];
  /** Status of a successful JSON answer (default 200; 204 when the handler returns undefined). */
  status?: number;
  /** Headers of the successful answer, by name, with what each carries. */
  responseHeaders?: Readonly<Record<string, DocumentedHeader>>;
  /** Answers other than the success and the problem+json errors (a 304, a 202 held for approval). */
  otherResponses?: Readonly<Record<number, DocumentedResponse>>;
  /** Largest body in bytes (default: the server's limit). */
  bodyLimit?: number;
  /**
   * How a device's nonce is checked (default: `window` for GET, `strict` otherwise). A GET
   * whose answer changes state — a device's command poll takes its due commands — must be
   * `strict`, or a replay to another gateway within the write-behind window could take them.
   */
  replay?: 'strict';
}

/** What a handler gets. */
export interface RouteInput<P, Q, B, A> {
  params: P;
  query: Q;
  body: B;
  principal: A;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * The caller as far as the onRequest hook got: authenticated, or a device whose signature
 * waits for its body.
 */
type Caller =
  { kind: 'user' | 'device'; principal: Principal } | Extract<HeaderCheck, { kind: 'device' }>;

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type PrincipalOf<A extends Access> = A extends { public: true } ? undefined : Principal;

/** The raw bytes of the request body (kept by the body parsers for signatures). */
export function rawBody(request: FastifyRequest): Uint8Array {
  return (request as FastifyRequest & { rawBody?: Buffer }).rawBody ?? new Uint8Array();
}

/**
 * The exact bytes a device signed: the body as read, or none when the request has none. A
 * body whose bytes were not kept would make the signature cover an empty body: a 415.
 */
function signedBody(request: FastifyRequest): Uint8Array {
  const kept = (request as FastifyRequest & { rawBody?: Buffer }).rawBody;
  if (kept !== undefined) return kept;
  if (declaresBody(request.headers)) throw unsignableBody(request);
  return new Uint8Array();
}

const unsignableBody = (request: FastifyRequest) =>
  new Problem(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `a signed request's body must be JSON, application/octet-stream or application/wasm sent with POST, PUT, PATCH or DELETE; this ${request.method} with ${request.headers['content-type'] === undefined ? 'no content type' : `'${request.headers['content-type']}'`} could not be verified`,
  );

/** Declare a route on the gateway. */
export function route<
  A extends Access,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  ctx: GatewayContext,
  spec: Omit<RouteSpec, 'params' | 'query' | 'body' | 'access'> & {
    access: A;
    params?: P;
    query?: Q;
    body?: B;
  },
  handler: (input: RouteInput<Out<P>, Out<Q>, Out<B>, PrincipalOf<A>>) => Promise<unknown>,
): void {
  const access: Access = spec.access;
  ctx.openapi.add({
    method: spec.method,
    url: spec.url,
    summary: spec.summary,
    tags: spec.tags,
    security: 'public' in access ? 'none' : access.devices ? 'user-or-device' : 'user',
    ...('public' in access ? {} : { roles: access.roles }),
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.query ? { query: spec.query } : {}),
    ...(spec.body || spec.documentedBody ? { body: spec.documentedBody ?? spec.body } : {}),
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.response ? { response: spec.response } : {}),
    ...(spec.mediaTypes ? { mediaTypes: spec.mediaTypes } : {}),
    successStatus: spec.status ?? 200,
    ...(spec.responseHeaders ? { responseHeaders: spec.responseHeaders } : {}),
    ...(spec.otherResponses ? { otherResponses: spec.otherResponses } : {}),
  });
  const devices = 'public' in access ? false : (access.devices ?? false);
  // what the headers established, from the onRequest hook to the handler
  const callers = new WeakMap<FastifyRequest, Caller>();
  const bodyLimit = spec.bodyLimit ?? ('public' in access ? PUBLIC_BODY_LIMIT : undefined);
  ctx.app.route({
    method: spec.method,
    url: spec.url,
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    // before fastify reads the body: a caller refused here costs no more than its headers
    onRequest: async (request, reply) => {
      // a public route has no caller to count per: only `global` rules apply to it
      if ('public' in access) {
        await ctx.rateLimits.enforce(undefined, request, reply);
        return;
      }
      const caller = await authenticateHeaders(ctx.auth, {
        authorization: request.headers.authorization,
        timestamp: header(request, 'x-saffron-timestamp'),
        nonce: header(request, 'x-saffron-nonce'),
        method: request.method,
        pathWithQuery: request.url,
        ...(spec.replay ? { replay: spec.replay } : {}),
      });
      if (caller.kind === 'user') {
        // rate limits count every authenticated request of their subject (429 + Retry-After)
        await ctx.rateLimits.enforce(caller.principal, request, reply);
        // a role assigned to the token or its operator name may admit what its own does not
        const admitted = await admitUser(ctx.store, caller.principal, access.roles, ctx.now());
        callers.set(request, { kind: 'user', principal: admitted });
        return;
      }
      if (!declaresBody(request.headers)) {
        // nothing to wait for: the signature covers the empty body
        const device = await verifyDeviceBody(ctx.auth, caller, new Uint8Array());
        if (!devices) requireRole(device, access.roles); // 403 for devices
        await ctx.rateLimits.enforce(device, request, reply);
        callers.set(request, { kind: 'device', principal: device });
        return;
      }
      // a device's body is not read where devices are refused anyway
      if (!devices) throw new Problem(403, 'FORBIDDEN', 'devices may not do this');
      if (!(BODY_METHODS.has(request.method) && keepsRawBody(request.headers['content-type'])))
        throw unsignableBody(request);
      callers.set(request, caller);
    },
    handler: async (request, reply) => {
      let principal: Principal | undefined;
      const caller = callers.get(request);
      if (caller === undefined) {
        if (!('public' in access)) throw new Error('the onRequest hook did not run'); // unreachable
      } else if ('principal' in caller) principal = caller.principal;
      else {
        principal = await verifyDeviceBody(ctx.auth, caller, signedBody(request));
        // counted once the signature holds: a forger cannot spend a device's budget
        await ctx.rateLimits.enforce(principal, request, reply);
      }
      // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the driver
      if (/%00/i.test(request.url))
        throw new Problem(400, 'NUL_CHARACTER', 'the URL contains a NUL character (%00)');
      if (spec.headers) parsePart(spec.headers, request.headers, 'headers');
      const input = {
        params: spec.params ? parsePart(spec.params, request.params, 'params') : undefined,
        query: spec.query ? parsePart(spec.query, request.query, 'query') : undefined,
        body: spec.body ? parsePart(spec.body, request.body, 'body') : undefined,
        principal,
        request,
        reply,
      } as RouteInput<Out<P>, Out<Q>, Out<B>, PrincipalOf<A>>;
      const result = await handler(input);
      if (result === reply || reply.sent) return reply;
      if (result === undefined) return reply.code(204).send();
      return reply.code(spec.status ?? 200).send(result);
    },
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
