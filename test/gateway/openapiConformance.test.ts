/**
 * The OpenAPI document describes what the server really does: a sample of real answers —
 * conditional GETs of the signed documents (200 with ETag, 304 without a body), the SAF
 * batch as a bare array, created and deleted resources, lists, errors — each checked
 * against the operation the document gives for it: the status is documented, every header
 * the document requires is sent and every header the server sends is documented, the body
 * has the documented media type and matches the documented schema, and every request
 * parameter used (path, query, header) is documented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_STEPS } from '../support/engine.js';
import { signedRecord } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { schemaMismatches } from '../support/jsonSchemaMatch.js';
import type { JsonSchema } from '../support/schemaFuzz.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const DEVICE = 'openapi-device-1';
const DEFINITION = `
workflow_type: documented
automate_next: true
steps:
  - { name: only, type: STANDARD, function: steps.mark }
`;

interface DocumentedHeaderObject {
  required?: boolean;
}
interface DocumentedResponseObject {
  headers?: Record<string, DocumentedHeaderObject>;
  content?: Record<string, { schema: JsonSchema }>;
}
interface OperationObject {
  parameters: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, DocumentedResponseObject>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
}

/** Headers a client may act on: these must be documented wherever the server sends them. */
const MEANINGFUL_HEADERS = [
  'etag',
  'cache-control',
  'location',
  'retry-after',
  'content-disposition',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
];

/** One request of the sample, as sent. */
interface Sample {
  method: string;
  /** The document's path template, e.g. `/api/v1/workflows/{id}`. */
  template: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  as: 'admin' | 'device';
}

describe.each(CLOUD_DIALECTS)('the OpenAPI document against real answers on $name', (dialect) => {
  let gw: TestGateway;
  let secret: string;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    gw = await startTestGateway(dialect, { stepsRoot: ENGINE_STEPS });
    secret = await gw.insertDevice(DEVICE);
    doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await gw.close();
  });

  /** Send `sample` and check its answer against the document; the answer's status and body. */
  async function check(sample: Sample): Promise<{ status: number; body: unknown; etag: string }> {
    const operation = doc.paths[sample.template]?.[sample.method.toLowerCase()];
    const name = `${sample.method} ${sample.template}`;
    expect(operation, `${name} is documented`).toBeDefined();
    const documented = (where: string) =>
      operation!.parameters.filter((p) => p.in === where).map((p) => p.name.toLowerCase());
    for (const key of Object.keys(sample.params ?? {})) expect(documented('path')).toContain(key);
    for (const key of Object.keys(sample.query ?? {})) expect(documented('query')).toContain(key);
    for (const key of Object.keys(sample.headers ?? {}))
      expect(documented('header'), `${name}: request header ${key}`).toContain(key.toLowerCase());
    if (sample.body !== undefined) {
      const schema = operation!.requestBody?.content['application/json']?.schema;
      expect(schema, `${name}: request body`).toBeDefined();
      expect(schemaMismatches(schema!, sample.body), `${name}: request body`).toEqual([]);
    }

    const path =
      sample.template.replace(/\{([^}]+)\}/g, (_, key: string) =>
        encodeURIComponent(sample.params![key]!),
      ) + (sample.query ? `?${new URLSearchParams(sample.query).toString()}` : '');
    const init = {
      method: sample.method,
      headers: sample.headers ?? {},
      ...(sample.body === undefined ? {} : { body: JSON.stringify(sample.body) }),
    };
    const res =
      sample.as === 'admin'
        ? await gw.asUser(gw.adminToken, path, init)
        : await gw.asDevice(DEVICE, secret, path, init);
    const text = await res.text();
    const answer = `${name} answered ${res.status}`;
    const response =
      operation!.responses[String(res.status)] ??
      (res.status >= 400 ? operation!.responses.default : undefined);
    expect(response, `${answer}: the status is not documented`).toBeDefined();

    const documentedHeaders = Object.keys(response!.headers ?? {}).map((h) => h.toLowerCase());
    for (const [header, spec] of Object.entries(response!.headers ?? {}))
      if (spec.required) expect(res.headers.has(header), `${answer}: ${header}`).toBe(true);
    for (const header of MEANINGFUL_HEADERS)
      if (res.headers.has(header) && !(res.status >= 400 && header === 'cache-control'))
        expect(documentedHeaders, `${answer}: sends ${header}`).toContain(header);

    const type = res.headers.get('content-type')?.split(';')[0];
    if (!response!.content) {
      expect(text, `${answer}: the document has no body`).toBe('');
      return { status: res.status, body: undefined, etag: res.headers.get('etag') ?? '' };
    }
    const media = response!.content[type ?? ''];
    expect(media, `${answer}: media type ${type}`).toBeDefined();
    if (!type?.endsWith('json')) return { status: res.status, body: text, etag: '' };
    const body: unknown = JSON.parse(text);
    const schema =
      '$ref' in media!.schema
        ? (doc as unknown as { components: { schemas: Record<string, JsonSchema> } }).components
            .schemas.Problem!
        : media!.schema;
    expect(schemaMismatches(schema, body), `${answer}: body`).toEqual([]);
    return { status: res.status, body, etag: res.headers.get('etag') ?? '' };
  }

  it('documents the conditional GETs of fraud rules and device config, 304 included', async () => {
    const rules = await check({
      method: 'GET',
      template: '/api/v1/config/fraud-rules',
      as: 'device',
    });
    expect(rules.status).toBe(200);
    expect(rules.body).toHaveProperty('rules');
    const unchanged = await check({
      method: 'GET',
      template: '/api/v1/config/fraud-rules',
      headers: { 'If-None-Match': rules.etag },
      as: 'device',
    });
    expect(unchanged.status).toBe(304);

    const config = await check({
      method: 'GET',
      template: '/api/v1/devices/{device_id}/config',
      params: { device_id: DEVICE },
      as: 'device',
    });
    expect(config.status).toBe(200);
    const same = await check({
      method: 'GET',
      template: '/api/v1/devices/{device_id}/config',
      params: { device_id: DEVICE },
      headers: { 'If-None-Match': config.etag },
      as: 'device',
    });
    expect(same.status).toBe(304);
  });

  it('documents the SAF batch as the bare array the spec sends', async () => {
    const record = signedRecord(DEVICE, secret);
    const batch = await check({
      method: 'POST',
      template: '/api/v1/transactions/batch',
      body: [record],
      as: 'device',
    });
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ synced_ids: [record.workflow_id] });
  });

  it('documents workflows: definitions, start, list, audit and a missing one', async () => {
    const definition = await check({
      method: 'POST',
      template: '/api/v1/workflow-definitions',
      body: { yaml: DEFINITION },
      as: 'admin',
    });
    expect(definition.status).toBe(201);
    const started = await check({
      method: 'POST',
      template: '/api/v1/workflows',
      body: { workflow_type: 'documented', owner_id: 'openapi' },
      as: 'admin',
    });
    expect(started.status).toBe(201);
    const { id } = started.body as { id: string };
    expect(
      (
        await check({
          method: 'GET',
          template: '/api/v1/workflows',
          query: { status: 'COMPLETED' },
          as: 'admin',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await check({
          method: 'GET',
          template: '/api/v1/workflows/{id}/audit',
          params: { id },
          as: 'admin',
        })
      ).status,
    ).toBe(200);
    expect(
      (await check({ method: 'GET', template: '/api/v1/workflow-definitions', as: 'admin' }))
        .status,
    ).toBe(200);
    const missing = await check({
      method: 'GET',
      template: '/api/v1/workflows/{id}',
      params: { id: '00000000-0000-4000-8000-000000000000' },
      as: 'admin',
    });
    expect(missing.status).toBe(404);
  });

  it('documents a created and a deleted resource (201 with no-store, 204 with no body)', async () => {
    const created = await check({
      method: 'POST',
      template: '/api/v1/registration-keys',
      body: { name: 'documented' },
      as: 'admin',
    });
    expect(created.status).toBe(201);
    const { key_id } = created.body as { key_id: string };
    const deleted = await check({
      method: 'DELETE',
      template: '/api/v1/registration-keys/{key_id}',
      params: { key_id },
      as: 'admin',
    });
    expect(deleted.status).toBe(204);
  });

  it('documents the probes, metrics (text) and the audit export (a file)', async () => {
    expect((await check({ method: 'GET', template: '/healthz', as: 'admin' })).status).toBe(200);
    expect((await check({ method: 'GET', template: '/metrics', as: 'admin' })).status).toBe(200);
    const exported = await check({
      method: 'GET',
      template: '/api/v1/audit/export',
      query: { format: 'csv' },
      as: 'admin',
    });
    expect(exported.status).toBe(200);
  });
});
