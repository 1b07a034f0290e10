/**
 * Boundary lengths for every sized field of every writing route: each string the OpenAPI
 * document bounds with `maxLength` (in the body, at any depth, and in the path) is sent at
 * exactly its limit and one past it. The answer is never a 5xx; one past the limit is a 4xx
 * problem+json. Where a valid request can be built (BASES), the limit itself must be
 * accepted — a limit the route takes but its column cannot hold fails there, as
 * `owner_id` did (255 accepted, VARCHAR(200) stored: a 500).
 *
 * The routes and their fields come from the served document, so a route added later is
 * covered without touching this file; bodies for routes without a base are sampled from
 * their schema with a fixed seed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { plausible, type JsonSchema } from '../support/schemaFuzz.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const SEED = 0x5aff_0033;
const DEVICE = 'lengths-device-1';
const DEFINITION = `
workflow_type: lengths_wait
steps:
  - { name: first, type: STANDARD, function: steps.mark }
`;

type Key = string | number;

interface Operation {
  key: string;
  method: string;
  template: string;
  body: JsonSchema | undefined;
  pathParams: { name: string; schema: JsonSchema }[];
}

/** A string the document bounds, where it sits in the request. */
interface SizedField {
  where: 'body' | 'path';
  path: Key[];
  maxLength: number;
}

/** Requests known to be valid, so a value at the limit must be accepted (2xx). */
const BASES: Record<string, { params?: Record<string, string>; body: Record<string, unknown> }> = {
  'POST /api/v1/workflows': { body: { workflow_type: 'lengths_wait' } },
  'POST /api/v1/devices/register': {
    body: { device_name: 'till', device_type: 'pos', location: 'shop' },
  },
  'PATCH /api/v1/devices/{device_id}': { params: { device_id: DEVICE }, body: { location: 'x' } },
  'POST /api/v1/registration-keys': { body: { name: 'key' } },
  'POST /api/v1/users': { body: { name: 'someone', role: 'viewer' } },
};

/** Fields at whose limit a base request is still not valid for a reason of its own. */
const LIMIT_NOT_ACCEPTED = new Set<string>([
  // the type named at the limit is not registered (but the length itself is accepted)
  'POST /api/v1/workflows $.workflow_type',
]);

function operationsOf(doc: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
}): Operation[] {
  const out: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) {
      if (method === 'get') continue;
      const parameters = (op.parameters ?? []) as {
        name: string;
        in: string;
        schema: JsonSchema;
      }[];
      const requestBody = op.requestBody as
        { content: Record<string, { schema: JsonSchema }> } | undefined;
      out.push({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        body: requestBody?.content['application/json']?.schema,
        pathParams: parameters.filter((p) => p.in === 'path'),
      });
    }
  return out;
}

/** Every bounded string of `schema`, by path (array items at index 0, every union branch). */
function sizedFields(schema: JsonSchema | undefined, path: Key[] = []): SizedField[] {
  if (!schema) return [];
  const out: SizedField[] = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string') && schema.maxLength !== undefined)
    out.push({ where: 'body', path, maxLength: schema.maxLength });
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    out.push(...sizedFields(branch, path));
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    out.push(...sizedFields(property, [...path, name]));
  if (schema.items) out.push(...sizedFields(schema.items, [...path, 0]));
  return out;
}

/** `value` with `replacement` at `path`, creating objects and arrays on the way. */
function setAt(value: unknown, path: Key[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [Key, ...Key[]];
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...(value as unknown[])] : [];
    list[head] = setAt(list[head], rest, replacement);
    return list;
  }
  const object =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? { ...(value as Record<string, unknown>) }
      : {};
  object[head] = setAt(object[head], rest, replacement);
  return object;
}

const label = (field: SizedField) =>
  field.where === 'path'
    ? `{${String(field.path[0])}}`
    : `$${field.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}`;

describe.each(CLOUD_DIALECTS)('field lengths at their limits on $name', (dialect) => {
  let gw: TestGateway;
  let deviceSecret: string;
  let operations: Operation[];

  beforeAll(async () => {
    gw = await startTestGateway(dialect, { stepsRoot: ENGINE_STEPS });
    deviceSecret = await gw.insertDevice(DEVICE);
    const registered = await gw.asUser(gw.adminToken, '/api/v1/workflow-definitions', {
      method: 'POST',
      body: JSON.stringify({ yaml: DEFINITION }),
    });
    expect(registered.status).toBe(201);
    const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as Parameters<
      typeof operationsOf
    >[0];
    operations = operationsOf(doc);
  });
  afterAll(async () => {
    await gw.close();
  });

  /** Send as the admin; a route only devices may call gets the device's signed request. */
  async function send(op: Operation, params: Record<string, string>, body: unknown) {
    const path = op.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(params[name] ?? ''),
    );
    const init = {
      method: op.method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
    const res = await gw.asUser(gw.adminToken, path, init);
    if (res.status !== 403) return res;
    await res.body?.cancel();
    return gw.asDevice(DEVICE, deviceSecret, path, init);
  }

  it('finds the sized fields of the writing routes', () => {
    const keys = operations.flatMap((op) =>
      sizedFields(op.body).map((f) => `${op.key} ${label(f)}`),
    );
    expect(keys).toEqual(
      expect.arrayContaining([
        'POST /api/v1/workflows $.owner_id',
        'POST /api/v1/workflows $.idempotency_key',
        'POST /api/v1/devices/register $.device_name',
      ]),
    );
  });

  it('answers limit and limit + 1 with no 5xx, and limit + 1 with a 4xx problem', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const [opIndex, op] of operations.entries()) {
      const base = BASES[op.key];
      const sampledParams = Object.fromEntries(
        op.pathParams.map((p, i) => [
          p.name,
          String(fc.sample(plausible(p.schema), { seed: SEED + opIndex * 31 + i, numRuns: 1 })[0]),
        ]),
      );
      const params = { ...sampledParams, ...base?.params };
      const body =
        base?.body ??
        (op.body
          ? fc.sample(plausible(op.body), { seed: SEED + opIndex, numRuns: 1 })[0]
          : undefined);
      const fields: SizedField[] = [
        ...sizedFields(op.body),
        ...op.pathParams
          .filter((p) => p.schema.maxLength !== undefined)
          .map((p): SizedField => ({
            where: 'path',
            path: [p.name],
            maxLength: p.schema.maxLength!,
          })),
      ];
      for (const field of fields)
        for (const length of [field.maxLength, field.maxLength + 1]) {
          const value = 'a'.repeat(length);
          const res =
            field.where === 'path'
              ? await send(op, { ...params, [String(field.path[0])]: value }, body)
              : await send(op, params, setAt(body, field.path, value));
          sent += 1;
          const text = await res.text();
          const what = `${op.key} ${label(field)} at ${length}: ${res.status} ${text.slice(0, 200)}`;
          if (res.status >= 500) failures.push(what);
          else if (length > field.maxLength) {
            if (res.status < 400 || !res.headers.get('content-type')?.includes('problem+json'))
              failures.push(what);
          } else if (
            base &&
            field.where === 'body' &&
            !LIMIT_NOT_ACCEPTED.has(`${op.key} ${label(field)}`) &&
            (res.status < 200 || res.status >= 300)
          )
            failures.push(what);
        }
    }
    expect(sent).toBeGreaterThan(50);
    expect(failures).toEqual([]);
  });
});
