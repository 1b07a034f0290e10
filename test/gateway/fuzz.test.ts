/**
 * HTTP fuzz of the control plane: at least 10,000 malformed, oversized and wrong-typed
 * requests over real HTTP on loopback, across every operation of the served OpenAPI document
 * (so a route added later is fuzzed without touching this file). The gateway must answer
 * every one with a 4xx problem+json carrying a `code` — never a 5xx, never a hang or a crash
 * — and the database must be unchanged afterwards, table by table, by content hash.
 *
 * Every request is invalid by construction, so "nothing written" is a property of the
 * gateway and not of luck: each carries at least one defect the server must refuse whatever
 * the rest looks like — a body that breaks its schema (test/support/schemaFuzz.ts), JSON
 * the parser refuses (malformed, nested too deep, `__proto__`, NUL, over the size limit, a
 * media type nobody parses), a path or query parameter that breaks its schema (traversal,
 * non-UUIDs, bad percent-encoding, over-long), or credentials that do not authenticate. The
 * rest of the request is made to look right — an admin token, a correctly signed device
 * request, a body shaped like the schema — so the defect is met by validation, not by a
 * blanket 401. A 2xx on anything but a read fails the test with the request printed; the
 * one 2xx a mutating route may give is the SAF batch's per-record answer, and only when it
 * accepted nothing (its records are tampered after signing, so none can verify).
 *
 * The seed is fixed and logged (`SAFFRON_FUZZ_SEED` overrides it): a failure names the seed
 * and the case, and the same seed generates the same requests again.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { verifyTransactionRecord } from '../../runtime/index.js';
import { signedRecord } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  coercedNumberSatisfies,
  NASTY_STRINGS,
  plausible,
  stringSatisfies,
  violating,
  violatingString,
  type JsonSchema,
} from '../support/schemaFuzz.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const SEED = Number(process.env.SAFFRON_FUZZ_SEED ?? 0x5aff_2025);
const REQUESTS = 10_000;
const IN_FLIGHT = 6;
const DEVICE = 'fuzz-device-1';
/** Larger than the default body limit (1 MiB); the routes with larger limits get it unclosed. */
const OVERSIZED_BYTES = 1024 * 1024 + 4096;
const SAF_BATCH_PATH = '/api/v1/transactions/batch';

/** One operation of the OpenAPI document. */
interface Operation {
  key: string;
  method: string;
  template: string;
  security: 'none' | 'user' | 'user-or-device';
  /** Placeholders of the path, with their schema when the document gives one. */
  pathParams: { name: string; schema: JsonSchema | undefined }[];
  query: { name: string; schema: JsonSchema }[];
  body: JsonSchema | undefined;
}

/** Who a request claims to be. */
type AuthPlan =
  | { kind: 'none' }
  | { kind: 'admin' }
  | { kind: 'device' }
  | { kind: 'header'; authorization: string }
  | { kind: 'bad-device'; flaw: 'secret' | 'stale' | 'nonce' | 'body' | 'path' | 'ghost' };

/** A request body: text or bytes, or `pad` bytes of unterminated JSON made at send time. */
type BodyPlan = string | Uint8Array | { pad: number };

/** One generated request. */
interface FuzzCase {
  operation: string;
  defect: string;
  method: string;
  /** Encoded path and query. */
  target: string;
  contentType: string | undefined;
  body: BodyPlan | undefined;
  auth: AuthPlan;
  headers: Record<string, string>;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        security: Record<string, unknown>[];
        parameters?: { name: string; in: 'path' | 'query'; schema: JsonSchema }[];
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
      }
    >
  >;
}

/** The operations of the served document. */
function operationsOf(doc: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) {
      const parameters = op.parameters ?? [];
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      out.push({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        security:
          op.security.length === 0
            ? 'none'
            : op.security.some((s) => 'device' in s)
              ? 'user-or-device'
              : 'user',
        pathParams: names.map((name) => ({
          name,
          schema: parameters.find((p) => p.in === 'path' && p.name === name)?.schema,
        })),
        query: parameters.filter((p) => p.in === 'query'),
        body: op.requestBody?.content['application/json']?.schema,
      });
    }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Generators

/** What the server sees of a string sent as UTF-8 (lone surrogates become U+FFFD). */
const wellFormed = (value: string) => Buffer.from(value, 'utf8').toString('utf8');
const isDotSegment = (value: string) => value === '.' || value === '..';

/** Percent-encode everything but RFC 3986 unreserved characters. */
function encodeSegment(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments that are not valid percent-encoding: the router must refuse the URL. */
const badEncodings = fc.constantFrom('%', '%zz', '%E0%A4%A', '%C0%AF', '%ED%A0%80', 'a%2', '%%');

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8'] as const;
/** Media types no parser of the gateway takes: a 415 on every route that reads a body. */
const UNPARSED_TYPES = [
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data; boundary=fuzz',
  'application/json; charset=utf-16',
  'image/png',
  'application/jsonx',
  'json',
] as const;

const printable = (max: number) =>
  fc.string({ maxLength: max, unit: 'grapheme-ascii' }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));

/** Authorization headers that authenticate nobody. */
const garbageAuthorization = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Basic YWRtaW46YWRtaW4=',
    'Device',
    `Device ${DEVICE}`,
    `Device ${DEVICE}:`,
    'Device ../../x:c2ln',
    'Digest username="admin"',
    'bearer saf_',
  ),
  fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((s) => `Bearer saf_${s}`), // well-formed, unknown
  printable(200).map((s) => `Bearer ${s}`),
  printable(200).map((s) => `Device ${s}`),
  printable(200),
);

const badAuth: fc.Arbitrary<AuthPlan> = fc.oneof(
  fc.constant<AuthPlan>({ kind: 'none' }),
  garbageAuthorization.map((authorization): AuthPlan => ({ kind: 'header', authorization })),
  fc
    .constantFrom('secret', 'stale', 'nonce', 'body', 'path', 'ghost' as const)
    .map((flaw): AuthPlan => ({ kind: 'bad-device', flaw })),
);

function goodAuth(op: Operation): fc.Arbitrary<AuthPlan> {
  switch (op.security) {
    case 'none':
      return fc.oneof(
        { weight: 4, arbitrary: fc.constant<AuthPlan>({ kind: 'none' }) },
        { weight: 1, arbitrary: fc.constant<AuthPlan>({ kind: 'admin' }) },
      );
    case 'user':
      return fc.constant({ kind: 'admin' });
    case 'user-or-device':
      return fc.oneof(
        { weight: 3, arbitrary: fc.constant<AuthPlan>({ kind: 'device' }) },
        { weight: 1, arbitrary: fc.constant<AuthPlan>({ kind: 'admin' }) },
      );
  }
}

/** A value for a path parameter that its schema accepts, as often as not the test device. */
function goodParam(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const known = [DEVICE, '*', 'fleet'].filter(
    (v) => schema === undefined || stringSatisfies(v, schema),
  );
  const shaped = schema
    ? plausible(schema).map((v) => wellFormed(String(v)))
    : fc.constantFrom(...NASTY_STRINGS);
  const safe = shaped.filter((v) => v !== '' && !isDotSegment(v));
  return known.length > 0
    ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: safe })
    : safe;
}

/** A path segment its schema refuses: encoded, or not valid percent-encoding at all. */
function badParam(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  if (!schema) return badEncodings;
  const encoded = violatingString(schema)
    ?.map(wellFormed)
    .filter((v) => v !== '' && !isDotSegment(v) && !stringSatisfies(v, schema))
    .map(encodeSegment);
  return encoded
    ? fc.oneof({ weight: 4, arbitrary: encoded }, { weight: 1, arbitrary: badEncodings })
    : badEncodings;
}

/** A query value its schema refuses, as zod reads query strings. */
function badQueryValue(schema: JsonSchema): fc.Arbitrary<string[]> {
  const numeric = schema.type === 'integer' || schema.type === 'number';
  const single = numeric
    ? fc
        .oneof(
          fc.constantFrom('abc', '', 'NaN', 'Infinity', '-1', '0', '1.5', '1e400', '1,2', ' '),
          fc.constantFrom('9007199254740993', '-9007199254740993', '0.000001'),
          fc.string({ maxLength: 8 }),
          fc.double().map(String),
          fc.integer().map(String),
        )
        .filter((s) => !coercedNumberSatisfies(s, schema))
    : (violatingString(schema)
        ?.map(wellFormed)
        .filter((s) => !stringSatisfies(s, schema)) ?? fc.constant(undefined));
  // a repeated key arrives as an array, which no query field takes
  const repeated = fc.tuple(printable(8), printable(8)).map(([a, b]) => [a, b]);
  return fc.oneof(
    single.map((s) => (s === undefined ? ['a', 'b'] : [s])),
    repeated,
  );
}

const queryString = (pairs: [string, string][]) =>
  pairs.length === 0
    ? ''
    : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeSegment(v)}`).join('&')}`;

function goodQuery(op: Operation): fc.Arbitrary<[string, string][]> {
  if (op.query.length === 0) return fc.constant([]);
  return fc
    .tuple(
      ...op.query.map((q) =>
        fc.option(
          plausible(q.schema).map((v): [string, string] => [q.name, String(v)]),
          {
            freq: 2,
          },
        ),
      ),
    )
    .map((pairs) => pairs.filter((p): p is [string, string] => p !== null));
}

/** A body that looks like what the operation takes (none for bodiless operations). */
function goodBody(op: Operation): fc.Arbitrary<{ type?: string; body?: BodyPlan }> {
  if (!op.body) return fc.constant({});
  return fc
    .tuple(fc.constantFrom(...JSON_TYPES), plausible(op.body))
    .map(([type, value]) => ({ type, body: JSON.stringify(value) }));
}

const notJson = (text: string) => {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
};

/** Bodies refused before any schema is consulted (parser, size, media type). */
function parserDefect(
  op: Operation,
): fc.Arbitrary<{ defect: string; type: string; body: BodyPlan }> {
  const json = fc.constantFrom(...JSON_TYPES);
  const shaped = op.body ? plausible(op.body) : fc.jsonValue({ maxDepth: 2 });
  const malformed = fc.oneof(
    fc
      .jsonValue({ maxDepth: 3 })
      .map((v) => JSON.stringify(v))
      .filter((t) => t.length > 1)
      .chain((t) => fc.integer({ min: 1, max: t.length - 1 }).map((n) => t.slice(0, n))),
    fc.constantFrom(
      "{'a':1}",
      '{"a":1,}',
      'NaN',
      'undefined',
      '[1,2',
      '{"a" 1}',
      'tru',
      '"unterminated',
      '01',
      '{"a":1}}',
      '\ufeff{}',
      '//c\n{}',
      '',
      '   ',
    ),
    fc.string({ maxLength: 30 }),
  );
  const deep = fc
    .tuple(fc.integer({ min: 33, max: 400 }), fc.boolean())
    .map(([depth, objects]) =>
      objects
        ? `${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}`
        : `${'['.repeat(depth)}${']'.repeat(depth)}`,
    );
  const polluting = fc
    .tuple(
      fc.constantFrom('__proto__', 'prototype', 'constructor'),
      fc.jsonValue({ maxDepth: 2 }),
      shaped,
    )
    .map(([key, value, body]) => {
      const rest = JSON.stringify(body);
      const own =
        key === 'constructor'
          ? `"constructor":{"prototype":${JSON.stringify(value)}}`
          : `"${key}":${JSON.stringify(value)}`;
      return rest.startsWith('{') && rest !== '{}' ? `{${own},${rest.slice(1)}` : `[{${own}}]`;
    });
  const nul = fc
    .tuple(shaped, fc.string({ maxLength: 8 }))
    .map(([body, s]) => JSON.stringify({ body, note: `${s}\u0000${s}` }));
  const refused = fc
    .oneof(
      malformed.filter(notJson).map((body) => ({ defect: 'malformed JSON', body })),
      deep.map((body) => ({ defect: 'nested too deep', body })),
      polluting.map((body) => ({ defect: 'prototype key', body })),
      nul.map((body) => ({ defect: 'NUL character', body })),
      fc.nat(64 * 1024).map((extra) => ({
        defect: 'oversized',
        body: { pad: OVERSIZED_BYTES + extra },
      })),
    )
    .chain(({ defect, body }) => json.map((type) => ({ defect, type, body })));
  const unparsed = fc.tuple(fc.constantFrom(...UNPARSED_TYPES), shaped).map(([type, body]) => ({
    defect: `unsupported media type ${type}`,
    type,
    body: JSON.stringify(body),
  }));
  return fc.oneof({ weight: 6, arbitrary: refused }, { weight: 1, arbitrary: unparsed });
}

/** SAF records, each spoiled after signing so that it cannot verify. */
function tamperedRecords(secret: string): fc.Arbitrary<unknown[]> {
  const record = fc
    .record({
      workflow_id: fc.uuid(),
      device_sequence: fc.integer({ min: 1, max: 1_000_000 }),
      amount_minor: fc.integer({ min: 0, max: 10_000_000 }),
    })
    .map((fields) => signedRecord(DEVICE, secret, fields));
  type Spoil = (r: Record<string, unknown>) => Record<string, unknown>;
  const spoil = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('amount_minor', 'currency', 'device_sequence', 'final_state', 'extra'),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([key, value]): Spoil => (r) => ({ ...r, [key]: value })),
    // still a well-formed record, with other content than was signed
    fc
      .integer({ min: 1, max: 1000 })
      .map((n): Spoil => (r) => ({ ...r, amount_minor: Number(r.amount_minor) + n })),
    fc.constant<Spoil>((r) => ({ ...r, final_state: { approved: false } })),
    fc.string({ maxLength: 64 }).map((signature): Spoil => (r) => ({ ...r, signature })),
    fc.constant<Spoil>(({ signature: _s, ...rest }) => rest),
    fc
      .constantFrom('4111111111111111', '5500 0000 0000 0004')
      .map((pan): Spoil => (r) => ({ ...r, card: { ...(r.card as object), pan } })),
    fc.constant<Spoil>((r) => ({ ...r, device_id: 'fuzz-device-2' })),
  );
  const spoiled = fc
    .tuple(record, spoil)
    .map(([r, f]) => f(r))
    .filter((r) => !verifyTransactionRecord([secret], r));
  const junk = fc
    .jsonValue({ maxDepth: 2 })
    .filter(
      (v) =>
        typeof v !== 'object' ||
        v === null ||
        !verifyTransactionRecord([secret], v as Record<string, unknown>),
    );
  return fc.array(fc.oneof({ weight: 4, arbitrary: spoiled }, { weight: 1, arbitrary: junk }), {
    minLength: 1,
    maxLength: 8,
  });
}

const extraHeaders = fc.record(
  {
    'if-none-match': fc.oneof(printable(80), fc.constant('*'), fc.constant('"x"')),
    accept: fc.constantFrom('*/*', 'text/html', 'application/problem+json', 'x/y;q=0'),
    'x-forwarded-for': fc.constantFrom('127.0.0.1', '::1, 10.0.0.1', 'garbage'),
  },
  { requiredKeys: [] },
);

/** Which part of a request carries its defect. */
interface Defect {
  name: string;
  param?: string;
  query?: boolean;
  body?: fc.Arbitrary<{ defect: string; type: string; body: BodyPlan }>;
  auth?: boolean;
}

/** Every request of `op`: its defects by weight, the rest of the request made to look right. */
function casesOf(op: Operation, secret: string): fc.Arbitrary<FuzzCase> | undefined {
  const defects: { weight: number; defect: Defect }[] = [];
  const bodyBad = op.body && violating(op.body);
  if (bodyBad)
    defects.push({
      weight: 5,
      defect: {
        name: 'body schema',
        body: fc
          .tuple(fc.constantFrom(...JSON_TYPES), bodyBad)
          .map(([type, v]) => ({ defect: 'body schema', type, body: JSON.stringify(v) })),
      },
    });
  if (op.template === SAF_BATCH_PATH)
    defects.push({
      weight: 5,
      defect: {
        name: 'tampered records',
        body: tamperedRecords(secret).map((records) => ({
          defect: 'tampered records',
          type: 'application/json',
          body: JSON.stringify({ records }),
        })),
      },
    });
  if (op.method !== 'GET')
    defects.push({ weight: 3, defect: { name: 'parser', body: parserDefect(op) } });
  for (const p of op.pathParams)
    defects.push({
      weight: 3 / op.pathParams.length,
      defect: { name: `param ${p.name}`, param: p.name },
    });
  if (op.query.length > 0) defects.push({ weight: 2, defect: { name: 'query', query: true } });
  if (op.security !== 'none') defects.push({ weight: 1, defect: { name: 'auth', auth: true } });
  // a read may succeed: it is fuzzed with well-formed requests too
  if (op.method === 'GET') defects.push({ weight: 1, defect: { name: 'none (read)' } });
  if (defects.length === 0) return undefined;
  return fc.oneof(
    ...defects.map(({ weight, defect }) => ({
      weight: Math.max(1, Math.round(weight)),
      arbitrary: caseWith(op, defect),
    })),
  );
}

function caseWith(op: Operation, defect: Defect): fc.Arbitrary<FuzzCase> {
  const params = fc.tuple(
    ...op.pathParams.map((p) =>
      p.name === defect.param ? badParam(p.schema) : goodParam(p.schema).map(encodeSegment),
    ),
  );
  const query = defect.query
    ? fc.tuple(goodQuery(op), fc.constantFrom(...op.query), fc.nat()).chain(([pairs, q, at]) =>
        badQueryValue(q.schema).map((values) => {
          const rest = pairs.filter(([k]) => k !== q.name);
          const bad = values.map((v): [string, string] => [q.name, v]);
          return [
            ...rest.slice(0, at % (rest.length + 1)),
            ...bad,
            ...rest.slice(at % (rest.length + 1)),
          ];
        }),
      )
    : goodQuery(op);
  const body: fc.Arbitrary<{ defect?: string; type?: string; body?: BodyPlan }> =
    defect.body ?? goodBody(op);
  const auth = defect.auth ? badAuth : goodAuth(op);
  return fc
    .record({ params, query, body, auth, headers: extraHeaders })
    .map(({ params, query, body, auth, headers }) => {
      let i = 0;
      const path = op.template.replace(/\{[^}]+\}/g, () => params[i++]!);
      return {
        operation: op.key,
        defect: body.defect ?? defect.name,
        method: op.method,
        target: `${path}${queryString(query)}`,
        contentType: op.method === 'GET' ? undefined : body.type,
        body: op.method === 'GET' ? undefined : body.body,
        auth,
        headers,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Database snapshot

type Database = TestGateway['handle']['store']['db'];

/** A row as compared, by table: bookkeeping a refused request may legitimately leave is cut. */
const BOOKKEEPING: Record<string, string> = {
  // the device status machine runs around every SAF upload, even one whose records are all
  // refused (OFFLINE → SYNCING → OFFLINE): its snapshot and the last-seen time move
  edge_devices: `(to_jsonb(t) #- '{metadata,actor}') - 'last_seen'`,
};

/** Row count and content hash of every table of the store's schema. */
async function snapshot(db: Database): Promise<Record<string, string>> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`.execute(
    db,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    // the replay cache gains a row per authenticated device request, by design: only rows
    // of other devices would mean a write went where it should not
    const where = name === 'device_request_nonces' ? sql`WHERE t.device_id <> ${DEVICE}` : sql``;
    const row = sql.raw(`(${BOOKKEEPING[name] ?? 'to_jsonb(t)'})::text`);
    const { rows } = await sql<{ n: string | number; h: string }>`
      SELECT count(*) AS n, md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) AS h
      FROM (SELECT ${row} AS r FROM ${sql.table(name)} t ${where}) s`.execute(db);
    out[name] = `${Number(rows[0]!.n)} rows, ${rows[0]!.h}`;
  }
  expect(Object.keys(out)).toContain('edge_devices');
  return out;
}

// ---------------------------------------------------------------------------------------------

const dialect = CLOUD_DIALECTS[0]!;

describe(`HTTP fuzz of the control plane on ${dialect.name}`, () => {
  let gw: TestGateway;
  let secret: string;
  let operations: Operation[];

  beforeAll(async () => {
    gw = await startTestGateway(dialect);
    secret = await gw.insertDevice(DEVICE);
    await gw.insertDevice('fuzz-device-2');
    const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
    operations = operationsOf(doc);
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** Credentials of `plan` for a request (signatures over exactly what is sent). */
  function authHeaders(
    plan: AuthPlan,
    method: string,
    pathWithQuery: string,
    body: string | Uint8Array,
  ): Record<string, string> {
    const sign = (extra: Record<string, unknown> = {}, device = DEVICE, key = secret) =>
      deviceAuthHeaders(device, key, { method, pathWithQuery, body, ...extra });
    switch (plan.kind) {
      case 'none':
        return {};
      case 'admin':
        return { authorization: `Bearer ${gw.adminToken}` };
      case 'device':
        return sign();
      case 'header':
        return { authorization: plan.authorization };
      case 'bad-device':
        switch (plan.flaw) {
          case 'secret':
            return sign({}, DEVICE, 'not-the-device-secret');
          case 'stale':
            return sign({ timestamp: new Date(Date.now() - 600_000).toISOString() });
          case 'nonce':
            return sign({ nonce: 'short' });
          case 'body':
            return sign({ body: typeof body === 'string' ? `${body} ` : 'x' });
          case 'path':
            return sign({ pathWithQuery: `${pathWithQuery}x` });
          case 'ghost':
            return sign({}, 'fuzz-ghost-device', secret);
        }
    }
  }

  const materialise = (body: BodyPlan | undefined): string | Uint8Array | undefined =>
    body === undefined || typeof body === 'string' || body instanceof Uint8Array
      ? body
      : `{"pad":"${'x'.repeat(body.pad)}`;

  it('answers ≥ 10,000 malformed requests with 4xx problems, never a 5xx, writing nothing', async () => {
    const fuzzed = operations
      .map((op) => ({ op, cases: casesOf(op, secret) }))
      .filter((x) => x.cases !== undefined);
    // a mutating operation with nothing that makes its requests invalid could not be fuzzed
    // without risk of a write: it must be looked at (and this test taught about it)
    expect(
      operations.filter((op) => op.method !== 'GET' && !fuzzed.some((f) => f.op === op)),
    ).toEqual([]);
    const generator = fc.oneof(
      ...fuzzed.map(({ op, cases }) => ({
        weight: op.body || op.pathParams.length > 0 || op.query.length > 0 ? 4 : 1,
        arbitrary: cases!,
      })),
    );
    const cases = fc.sample(generator, { seed: SEED, numRuns: REQUESTS });
    console.log(
      `fuzz: seed ${SEED} (SAFFRON_FUZZ_SEED), ${cases.length} requests over ${fuzzed.length} operations, ${IN_FLIGHT} in flight`,
    );

    const before = await snapshot(gw.handle.store.db);
    const failures: string[] = [];
    const statuses = new Map<string, number>();
    const codes = new Map<string, number>();
    const pastAuth = new Set<string>();
    /** Per-record refusals in SAF batch answers, by code. */
    const records = new Map<string, number>();
    /** Answers to JSON sent with `; charset=utf-8`, by status. */
    const charset = new Map<number, number>();
    const seen = new Set<string>();
    const started = performance.now();

    const run = async (c: FuzzCase, index: number) => {
      const url = new URL(`${gw.url}${c.target}`);
      const pathWithQuery = `${url.pathname}${url.search}`;
      const body = materialise(c.body);
      const headers: Record<string, string> = {
        ...c.headers,
        ...(c.contentType !== undefined ? { 'content-type': c.contentType } : {}),
        ...authHeaders(c.auth, c.method, pathWithQuery, body ?? ''),
      };
      const describeCase = () => {
        const shown =
          body === undefined
            ? '(none)'
            : typeof body === 'string'
              ? body.length > 600
                ? `${body.slice(0, 600)}… (${body.length} chars)`
                : body
              : `${body.length} bytes`;
        return `#${index} ${c.method} ${c.target.slice(0, 300)} [${c.defect}; auth ${JSON.stringify(c.auth)}; content-type ${c.contentType ?? '-'}] body: ${shown}`;
      };
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          method: c.method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(30_000),
        });
        text = await response.text();
      } catch (error) {
        failures.push(`${describeCase()} → no answer: ${String(error)}`);
        return;
      }
      const { status } = response;
      seen.add(c.operation);
      statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
      if (status !== 401 && status !== 403) pastAuth.add(c.operation);
      if (c.contentType?.endsWith('charset=utf-8'))
        charset.set(status, (charset.get(status) ?? 0) + 1);
      const fail = (why: string) =>
        failures.push(`${describeCase()} → ${status} ${why}: ${text.slice(0, 400)}`);
      if (status >= 500) return fail('server error');
      if (status >= 400) {
        const type = response.headers.get('content-type') ?? '';
        if (!type.startsWith('application/problem+json')) return fail(`content-type ${type}`);
        let code: unknown;
        try {
          code = (JSON.parse(text) as { code?: unknown }).code;
        } catch {
          return fail('problem body is not JSON');
        }
        if (typeof code !== 'string' || code === '') return fail('problem without a code');
        codes.set(`${status} ${code}`, (codes.get(`${status} ${code}`) ?? 0) + 1);
        return;
      }
      if (c.method === 'GET') return; // reads may succeed (and must still write nothing)
      // a mutating route accepted the request: only a batch answer that accepted nothing is fine
      const answer = (() => {
        try {
          return JSON.parse(text) as { synced_ids?: unknown; rejected?: { code: string }[] };
        } catch {
          return undefined;
        }
      })();
      if (!(Array.isArray(answer?.synced_ids) && answer.synced_ids.length === 0))
        return fail('accepted a request built to be invalid');
      for (const { code } of answer.rejected ?? []) records.set(code, (records.get(code) ?? 0) + 1);
    };

    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < cases.length) {
          const index = next++;
          await run(cases[index]!, index);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `fuzz: ${cases.length} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    console.log(`fuzz: problem codes ${JSON.stringify(Object.fromEntries([...codes].sort()))}`);
    console.log(`fuzz: refused SAF records ${JSON.stringify(Object.fromEntries([...records]))}`);

    // server errors and hangs first: they matter most
    const worst = [
      ...failures.filter((f) => / → (5\d\d|no answer)/.test(f)),
      ...failures.filter((f) => !/ → (5\d\d|no answer)/.test(f)),
    ];
    expect(worst.slice(0, 25), `seed ${SEED}: ${failures.length} failing requests`).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(10_000);
    // every operation was reached, and reached past authentication
    expect(operations.map((o) => o.key).filter((k) => !seen.has(k))).toEqual([]);
    expect(operations.map((o) => o.key).filter((k) => !pastAuth.has(k))).toEqual([]);
    // each layer of refusal was exercised
    for (const code of [
      '400 MALFORMED_JSON',
      '400 BODY_TOO_DEEP',
      '400 FORBIDDEN_KEY',
      '400 NUL_CHARACTER',
      '400 VALIDATION_FAILED',
      '413 BODY_TOO_LARGE',
      '415 UNSUPPORTED_MEDIA_TYPE',
      '422 VALIDATION_FAILED',
      '401 INVALID_SIGNATURE',
      '401 INVALID_TOKEN',
    ])
      expect(codes.get(code) ?? 0, code).toBeGreaterThan(0);
    // SAF records reached the per-record checks, signature included
    for (const code of [
      'INVALID_RECORD',
      'INVALID_SIGNATURE',
      'DEVICE_MISMATCH',
      'CARD_DATA_IN_CLEAR',
    ])
      expect(records.get(code) ?? 0, `SAF ${code}`).toBeGreaterThan(0);
    // JSON with the charset parameter is parsed and validated, not refused as a media type
    expect(charset.get(422) ?? 0).toBeGreaterThan(0);
    expect(charset.get(415) ?? 0).toBe(0);

    const health = await fetch(`${gw.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(await snapshot(gw.handle.store.db)).toEqual(before);
    // and the snapshot is not blind: one changed field of one row shows in it
    await gw.handle.store.cloud
      .updateTable('edge_devices')
      .set({ location: 'moved by the test' })
      .where('device_id', '=', 'fuzz-device-2')
      .execute();
    expect(await snapshot(gw.handle.store.db)).not.toEqual(before);
  }, 900_000);
});
