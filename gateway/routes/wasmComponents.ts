/**
 * The WebAssembly registry over HTTP (spec: WASM distribution). Admins upload binaries;
 * operators and viewers list them and read their metadata; devices and admins download them
 * by hash to verify and cache locally.
 *
 * Upload takes either the raw bytes (`application/wasm` or `application/octet-stream`, with
 * `name`, `version_tag`, `description`, `input_schema` and `output_schema` in the query —
 * schemas as JSON text) or a JSON body carrying the bytes as `binary_base64`. Binaries are
 * content-addressed (runtime/wasm/registry.ts): the same bytes uploaded again answer 200 with
 * the existing row instead of 201, so a client can retry an upload it is unsure about.
 *
 * A binary is a WASI preview1 core module or a WebAssembly component (WASI 0.2); a component is
 * transpiled at upload (runtime/wasm/transpile.ts), so one that imports what the sandbox does
 * not provide (sockets, HTTP…) or exports nothing callable is refused with 422 then, not at
 * its first workflow.
 *
 * A download sends the stored bytes only after hashing them again: a file changed on disk is
 * never served as the binary its row names (the device would reject it anyway, but a
 * tampered store must show up as an error here, not as a device-side mystery).
 */
import { z } from 'zod';
import {
  getWasmComponent,
  listWasmComponents,
  readWasmComponentBytes,
  registerWasmComponent,
  WasmError,
  type WasmComponent,
} from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { auditActor } from '../auditActor.js';
import { columnString } from '../columnFields.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import { rawBody, route } from '../route.js';
import { parsePart } from '../validate.js';

const READ = ['admin', 'operator', 'viewer'] as const;

/** Largest binary an upload may carry (raw bytes). */
export const MAX_WASM_UPLOAD_BYTES = 16 * 1024 * 1024;

const hashParams = z.strictObject({
  hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest (64 lowercase hex)'),
});

const nameField = columnString('wasm_components', 'name');
const versionField = columnString('wasm_components', 'version_tag');
const descriptionField = z.string().max(2000);
const schemaText = z.string().max(64 * 1024);
const schemaObject = z.record(z.string(), z.unknown());

const rawUploadQuery = z.strictObject({
  name: nameField,
  version_tag: versionField,
  description: descriptionField.optional(),
  input_schema: schemaText.optional(),
  output_schema: schemaText.optional(),
});

const jsonUploadBody = z.strictObject({
  name: nameField,
  version_tag: versionField,
  description: descriptionField.optional(),
  input_schema: schemaObject.optional(),
  output_schema: schemaObject.optional(),
  binary_base64: z
    .string()
    .min(1)
    .max(Math.ceil(MAX_WASM_UPLOAD_BYTES / 3) * 4)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
});

const listQuery = z.strictObject({
  name: nameField.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

const componentResponse = z.object({
  id: z.string(),
  name: z.string(),
  version_tag: z.string(),
  binary_hash: z.string(),
  size_bytes: z.number().nullable(),
  description: z.string().nullable(),
  input_schema: z.unknown().nullable(),
  output_schema: z.unknown().nullable(),
  download_url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const parseSchema = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

const componentJson = (c: WasmComponent): z.infer<typeof componentResponse> => ({
  id: c.id,
  name: c.name,
  version_tag: c.versionTag,
  binary_hash: c.binaryHash,
  size_bytes: c.sizeBytes,
  description: c.description,
  input_schema: parseSchema(c.inputSchema),
  output_schema: parseSchema(c.outputSchema),
  download_url: `/api/v1/wasm-components/${c.binaryHash}/download`,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

const notFound = (hash: string) =>
  new Problem(404, 'WASM_COMPONENT_NOT_FOUND', `no WASM component with hash ${hash}`);

/** Registry errors a caller can fix, as 422 problems; anything else propagates. */
function uploadProblem(error: unknown): unknown {
  if (
    error instanceof WasmError &&
    [
      'WASM_INVALID_MODULE',
      'WASM_METADATA_INVALID',
      'WASM_VERSION_INVALID',
      'WASM_LINK_FAILED',
      'WASM_ENTRYPOINT_MISSING',
    ].includes(error.code)
  )
    return new Problem(422, error.code, error.message);
  return error;
}

const isBytes = (body: unknown): body is Buffer => Buffer.isBuffer(body);

/** Headers of a binary download, on 200 and 304 alike (the bytes never change). */
const IMMUTABLE_HEADERS = {
  ETag: { description: 'the quoted SHA-256 of the bytes', required: true },
  'Cache-Control': { description: 'private, max-age=31536000, immutable', required: true },
  'X-Saffron-SHA256': { description: 'the SHA-256 of the bytes, hex', required: true },
} as const;

/** Register the WASM registry routes; binaries live under `ctx.wasmStorageDir`. */
export function registerWasmComponentRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/wasm-components',
      summary:
        'upload a WASM binary (admin): a WASI preview1 module or a WASI 0.2 component, raw application/wasm with metadata in the query, or JSON with binary_base64; 201 new, 200 already registered',
      tags: ['wasm'],
      access: { roles: ['admin'] },
      // parsed by the handler, which also takes raw application/wasm with the rest in the query
      documentedBody: jsonUploadBody,
      response: componentResponse,
      status: 201,
      responseHeaders: { Location: { description: 'the registered component', required: true } },
      otherResponses: {
        200: {
          description: 'already registered: the component as it was',
          headers: { Location: { description: 'the registered component', required: true } },
          body: componentResponse,
        },
      },
      bodyLimit: Math.ceil(MAX_WASM_UPLOAD_BYTES / 3) * 4 + 64 * 1024 * 3,
    },
    async ({ request, reply, principal }) => {
      let bytes: Uint8Array;
      let meta: {
        name: string;
        versionTag: string;
        description?: string;
        inputSchema?: unknown;
        outputSchema?: unknown;
      };
      if (isBytes(request.body)) {
        const query = parsePart(rawUploadQuery, request.query, 'query');
        bytes = rawBody(request);
        meta = {
          name: query.name,
          versionTag: query.version_tag,
          ...(query.description !== undefined ? { description: query.description } : {}),
          ...(query.input_schema !== undefined ? { inputSchema: query.input_schema } : {}),
          ...(query.output_schema !== undefined ? { outputSchema: query.output_schema } : {}),
        };
      } else if (request.body !== undefined && request.body !== null) {
        const body = parsePart(jsonUploadBody, request.body, 'body');
        bytes = Buffer.from(body.binary_base64, 'base64');
        meta = {
          name: body.name,
          versionTag: body.version_tag,
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.input_schema !== undefined ? { inputSchema: body.input_schema } : {}),
          ...(body.output_schema !== undefined ? { outputSchema: body.output_schema } : {}),
        };
      } else
        throw new Problem(
          400,
          'BODY_REQUIRED',
          'send the binary as application/wasm (metadata in the query) or as JSON with binary_base64',
        );
      if (bytes.length === 0) throw new Problem(422, 'WASM_INVALID_MODULE', 'the binary is empty');
      if (bytes.length > MAX_WASM_UPLOAD_BYTES)
        throw new Problem(
          413,
          'BODY_TOO_LARGE',
          `a WASM binary may be at most ${MAX_WASM_UPLOAD_BYTES} bytes`,
        );
      const registered = await registerWasmComponent(ctx.store, bytes, meta, {
        storageDir: ctx.wasmStorageDir,
      }).catch((error: unknown) => {
        throw uploadProblem(error);
      });
      if (registered.created)
        await appendCommandAudit(
          ctx.store,
          auditActor(principal, request),
          [
            {
              event: 'WASM_COMPONENT_REGISTERED',
              details: {
                binary_hash: registered.component.binaryHash,
                name: registered.component.name,
                version_tag: registered.component.versionTag,
                size_bytes: registered.component.sizeBytes,
              },
            },
          ],
          ctx.now(),
        );
      return reply
        .code(registered.created ? 201 : 200)
        .header('location', `/api/v1/wasm-components/${registered.component.binaryHash}`)
        .send(componentJson(registered.component));
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/wasm-components',
      summary: 'list registered WASM binaries (by name, then oldest first)',
      tags: ['wasm'],
      access: { roles: READ },
      query: listQuery,
      response: z.object({
        components: z.array(componentResponse),
        total: z.number(),
        limit: z.number(),
        offset: z.number(),
      }),
    },
    async ({ query }) => {
      const all = await listWasmComponents(
        ctx.store,
        query.name !== undefined ? { name: query.name } : {},
      );
      return {
        components: all.slice(query.offset, query.offset + query.limit).map(componentJson),
        total: all.length,
        limit: query.limit,
        offset: query.offset,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/wasm-components/:hash',
      summary: "a WASM binary's metadata (operators, and devices that are to cache it)",
      tags: ['wasm'],
      access: { roles: READ, devices: true },
      params: hashParams,
      response: componentResponse,
    },
    async ({ params }) => {
      const component = await getWasmComponent(ctx.store, params.hash);
      if (!component) throw notFound(params.hash);
      return componentJson(component);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/wasm-components/:hash/download',
      summary:
        'download a WASM binary (devices and admins); the bytes hash to the path, ETag is the hash',
      tags: ['wasm'],
      access: { roles: ['admin'], devices: true },
      params: hashParams,
      headers: z.object({
        'if-none-match': z
          .string()
          .optional()
          .meta({ description: 'the quoted hash; 304 when it matches' }),
      }),
      mediaTypes: ['application/wasm'],
      responseHeaders: {
        ...IMMUTABLE_HEADERS,
        'Content-Disposition': { description: 'attachment; <hash>.wasm', required: true },
      },
      otherResponses: {
        304: { description: 'the held binary is this one; no body', headers: IMMUTABLE_HEADERS },
      },
    },
    async ({ params, request, reply }) => {
      const etag = `"${params.hash}"`;
      const bytes = await readWasmComponentBytes(ctx.store, params.hash, {
        storageDir: ctx.wasmStorageDir,
      }).catch((error: unknown) => {
        // registered, but its file is gone from WASM_STORAGE_DIR
        if (error instanceof WasmError && error.code === 'WASM_MODULE_NOT_FOUND')
          throw new Problem(404, 'WASM_BINARY_MISSING', error.message);
        throw error;
      });
      if (bytes === undefined) throw notFound(params.hash);
      reply
        .header('etag', etag)
        .header('cache-control', 'private, max-age=31536000, immutable')
        .header('x-saffron-sha256', params.hash);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply
        .code(200)
        .type('application/wasm')
        .header('content-disposition', `attachment; filename="${params.hash}.wasm"`)
        .send(Buffer.from(bytes));
    },
  );
}
