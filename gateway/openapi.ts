/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests — the
 * document cannot drift from what the server accepts.
 */
import { z } from 'zod';

/** One documented operation. */
export interface DocumentedRoute {
  method: string;
  url: string;
  summary: string;
  tags: readonly string[];
  security: 'none' | 'user' | 'user-or-device';
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response?: z.ZodType;
  successStatus: number;
}

const jsonSchema = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query') {
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
      (paths[path] ??= {})[r.method.toLowerCase()] = {
        summary: r.summary,
        tags: r.tags,
        security,
        parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
        ...(r.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(r.body) } },
              },
            }
          : {}),
        responses: {
          [String(r.successStatus)]: {
            description: 'success',
            ...(r.response
              ? { content: { 'application/json': { schema: jsonSchema(r.response) } } }
              : {}),
          },
          default: {
            description: 'an error',
            content: {
              'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
            },
          },
        },
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
