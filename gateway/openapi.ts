/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests — the
 * document cannot drift from what the server accepts.
 */
import { z } from 'zod';

/** A response header: what it carries, and whether every such answer has it. */
export interface DocumentedHeader {
  description: string;
  required?: boolean;
}

/** An answer besides the success and the problem+json errors. */
export interface DocumentedResponse {
  description: string;
  headers?: Readonly<Record<string, DocumentedHeader>>;
  /** JSON body, when the answer has one. */
  body?: z.ZodType;
}

/** One documented operation. */
export interface DocumentedRoute {
  method: string;
  url: string;
  summary: string;
  tags: readonly string[];
  security: 'none' | 'user' | 'user-or-device';
  /** Operator roles allowed (documented as `x-saffron-roles`). */
  roles?: readonly string[];
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  headers?: z.ZodType;
  response?: z.ZodType;
  mediaTypes?: readonly string[];
  successStatus: number;
  responseHeaders?: Readonly<Record<string, DocumentedHeader>>;
  otherResponses?: Readonly<Record<number, DocumentedResponse>>;
}

/** Sent with any answer that a rate-limit rule covers (every route may be). */
const RATE_LIMIT_HEADERS: Readonly<Record<string, DocumentedHeader>> = {
  'RateLimit-Limit': { description: 'requests allowed in the window of the tightest rule' },
  'RateLimit-Remaining': { description: 'requests left in that window' },
  'RateLimit-Reset': { description: 'seconds until that window ends' },
};

function headerObjects(headers: Readonly<Record<string, DocumentedHeader>>) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, h]) => [
      name,
      { description: h.description, required: h.required ?? false, schema: { type: 'string' } },
    ]),
  );
}

const PROBLEM_CONTENT = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
};

const jsonSchema = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const json = jsonSchema(schema) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

/** Collects routes and renders the document. */
export class OpenApiRegistry {
  private readonly routes: DocumentedRoute[] = [];

  add(route: DocumentedRoute): void {
    this.routes.push(route);
  }

  document(version: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const r of this.routes) {
      const path = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      const security =
        r.security === 'none'
          ? []
          : r.security === 'user'
            ? [{ bearer: [] }]
            : [{ bearer: [] }, { device: [] }];
      const limited = RATE_LIMIT_HEADERS;
      const successHeaders = { ...r.responseHeaders, ...limited };
      const responses: Record<string, unknown> = {
        [String(r.successStatus)]: {
          description: 'success',
          ...(Object.keys(successHeaders).length > 0
            ? { headers: headerObjects(successHeaders) }
            : {}),
          ...(r.response && r.successStatus !== 204
            ? { content: { 'application/json': { schema: jsonSchema(r.response) } } }
            : r.mediaTypes
              ? {
                  content: Object.fromEntries(
                    r.mediaTypes.map((type) => [type, { schema: { type: 'string' } }]),
                  ),
                }
              : {}),
        },
      };
      for (const [status, other] of Object.entries(r.otherResponses ?? {})) {
        const headers = { ...other.headers, ...limited };
        responses[status] = {
          description: other.description,
          ...(Object.keys(headers).length > 0 ? { headers: headerObjects(headers) } : {}),
          ...(other.body
            ? { content: { 'application/json': { schema: jsonSchema(other.body) } } }
            : {}),
        };
      }
      responses['429'] = {
        description: 'a rate limit was reached',
        headers: headerObjects({
          'Retry-After': { description: 'seconds to wait before trying again', required: true },
          ...limited,
        }),
        content: PROBLEM_CONTENT,
      };
      responses.default = { description: 'an error', content: PROBLEM_CONTENT };
      (paths[path] ??= {})[r.method.toLowerCase()] = {
        summary: r.summary,
        tags: r.tags,
        security,
        ...(r.roles ? { 'x-saffron-roles': r.roles } : {}),
        parameters: [
          ...parameters(r.params, 'path'),
          ...parameters(r.query, 'query'),
          ...parameters(r.headers, 'header'),
        ],
        ...(r.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(r.body) } },
              },
            }
          : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: { title: 'Saffron control plane', version },
      paths,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'operator API token' },
          device: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description:
              'Device <device_id>:<base64url HMAC-SHA256> with X-Saffron-Timestamp and X-Saffron-Nonce',
          },
        },
        schemas: {
          Problem: {
            type: 'object',
            required: ['type', 'title', 'status', 'code', 'detail'],
            properties: {
              type: { type: 'string' },
              title: { type: 'string' },
              status: { type: 'integer' },
              code: { type: 'string' },
              detail: { type: 'string' },
              errors: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { path: { type: 'string' }, message: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    };
  }
}
