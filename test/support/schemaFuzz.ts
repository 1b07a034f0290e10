/**
 * fast-check arbitraries driven by the JSON Schemas of the gateway's OpenAPI document, for the
 * HTTP fuzz test (test/gateway/fuzz.test.ts): values that look like what an operation takes
 * (`plausible`), and values that cannot satisfy a schema at all (`violating`).
 *
 * Why "cannot" and not "probably won't": a fuzzed body that is valid by chance would be
 * accepted and write a row, and a test that then asserts "nothing written" would be asserting
 * luck. The violations here are built from the schema itself — a wrong JSON type, a missing
 * required key, an unknown key on a closed object, a string past its `maxLength` or failing
 * its `pattern`, a number outside its range — and are checked against the schema before
 * they are used. The gateway's zod schemas accept a subset of what their JSON Schema
 * rendering allows (refinements only narrow), so a value that breaks the JSON Schema is
 * refused by the server as well. Preprocessing is the exception (the SAF batch takes a bare
 * array as its records); the fuzz test handles that route's answers on their own.
 */
import fc from 'fast-check';

/** The subset of JSON Schema (2020-12) that `z.toJSONSchema` emits for the gateway's routes. */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

/** Strings that have broken parsers, routers and SQL before. */
export const NASTY_STRINGS: readonly string[] = [
  ' ',
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f',
  "' OR '1'='1",
  "x'; DROP TABLE edge_devices; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x/a}',
  '{{ secrets.DB_PASSWORD }}',
  '__proto__',
  'constructor',
  'prototype',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  '\u202eevil',
  '😀🔥',
  'a\u0301',
  '\ud800',
  '\t\r\n',
  'a\u0000b',
  'A'.repeat(300),
  '%',
  '%zz',
  '\\',
  '*',
];

const UNRECOGNISED_KEYS = ['constructor', 'toString', 'admin', 'role', 'device_secret', 'id', ''];

const types = (schema: JsonSchema): JsonType[] | undefined =>
  schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];

const typeOf = (value: unknown): JsonType =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? 'number'
        : (typeof value as JsonType);

/** The JSON types a schema admits, or undefined when it admits any. */
function allowedTypes(schema: JsonSchema): Set<JsonType> | undefined {
  const listed = types(schema);
  if (listed) {
    const set = new Set(listed);
    if (set.has('number')) set.add('integer');
    if (set.has('integer')) set.add('number'); // a fraction breaks `integer` by its value
    return set;
  }
  if ('const' in schema) return new Set([typeOf(schema.const)]);
  if (schema.enum) return new Set(schema.enum.map(typeOf));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const union = new Set<JsonType>();
    for (const branch of branches) {
      const allowed = allowedTypes(branch);
      if (!allowed) return undefined;
      for (const t of allowed) union.add(t);
    }
    return union;
  }
  return undefined;
}

const anyJson = (depth = 2) => fc.jsonValue({ maxDepth: depth });

const valueOfType: Record<JsonType, () => fc.Arbitrary<unknown>> = {
  string: () => fc.oneof(fc.string(), fc.constantFrom(...NASTY_STRINGS)),
  number: () => fc.double({ noNaN: true, noDefaultInfinity: true }),
  integer: () => fc.integer(),
  boolean: () => fc.boolean(),
  null: () => fc.constant(null),
  object: () => fc.dictionary(fc.string({ maxLength: 8 }), anyJson(1), { maxKeys: 4 }),
  array: () => fc.array(anyJson(1), { maxLength: 4 }),
};

/** Whether `value` (a string) satisfies the string constraints of `schema`. */
export function stringSatisfies(value: string, schema: JsonSchema): boolean {
  const codePoints = [...value].length;
  if (schema.enum && !schema.enum.includes(value)) return false;
  if ('const' in schema && schema.const !== value) return false;
  if (schema.minLength !== undefined && value.length < schema.minLength) return false;
  if (schema.maxLength !== undefined && codePoints > schema.maxLength) return false;
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) return false;
  return true;
}

/** Whether `value`, as zod's `z.coerce.number()` reads a query string, satisfies `schema`. */
export function coercedNumberSatisfies(value: string, schema: JsonSchema): boolean {
  const n = Number(value);
  if (!Number.isFinite(n)) return false;
  if (types(schema)?.includes('integer') && !Number.isSafeInteger(n)) return false;
  if (schema.minimum !== undefined && n < schema.minimum) return false;
  if (schema.maximum !== undefined && n > schema.maximum) return false;
  return true;
}

function plausibleString(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString());
  const min = schema.minLength ?? 0;
  const max = Math.max(min, Math.min(schema.maxLength ?? 24, 24));
  if (schema.pattern !== undefined)
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => stringSatisfies(s, schema) && s.length <= 64);
  return fc.string({ minLength: min, maxLength: max });
}

/** A value shaped like what `schema` takes (most satisfy it; nothing relies on that). */
export function plausible(schema: JsonSchema): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return fc.oneof(...branches.map(plausible));
  switch (types(schema)?.[0]) {
    case 'string':
      return plausibleString(schema);
    case 'integer':
      return fc.integer({
        min: Math.max(schema.minimum ?? -1000, Number.MIN_SAFE_INTEGER),
        max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = schema.minItems ?? 0;
      return fc.array(plausible(schema.items ?? {}), {
        minLength: min,
        maxLength: Math.max(min, Math.min(schema.maxItems ?? 3, 3)),
      });
    }
    case 'object':
      return plausibleObject(schema);
    case undefined:
      return anyJson();
  }
}

function plausibleObject(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const model = Object.fromEntries(
    Object.entries(properties).map(([key, s]) => [key, plausible(s)]),
  );
  const requiredKeys = (schema.required ?? []).filter((k) => Object.hasOwn(properties, k));
  if (Object.keys(model).length === 0)
    return schema.additionalProperties === false
      ? fc.constant({})
      : fc.dictionary(fc.stringMatching(/^[a-z_]{1,12}$/), anyJson(1), { maxKeys: 3 });
  return fc.record(model, { requiredKeys });
}

/** A key none of `schemas` declares. */
const undeclaredKey = (schemas: readonly JsonSchema[]) =>
  fc
    .oneof(fc.constantFrom(...UNRECOGNISED_KEYS), fc.string({ maxLength: 12 }))
    .filter((key) => schemas.every((s) => !Object.hasOwn(s.properties ?? {}, key)));

/** Strings that break the string constraints of `schema` (empty when it has none). */
function stringViolations(schema: JsonSchema): fc.Arbitrary<string>[] {
  const out: fc.Arbitrary<string>[] = [];
  const { maxLength, minLength, pattern } = schema;
  if (maxLength !== undefined)
    out.push(
      fc
        .tuple(fc.nat(32), fc.string({ minLength: 1, maxLength: 3, unit: 'grapheme-ascii' }))
        .map(([extra, unit]) => unit.repeat(Math.ceil((maxLength + 1 + extra) / unit.length))),
    );
  if (minLength !== undefined && minLength > 0) out.push(fc.constant(''));
  const closed = schema.enum ?? ('const' in schema ? [schema.const] : undefined);
  if (pattern !== undefined || closed !== undefined) {
    const nearMisses = (closed ?? [])
      .filter((v): v is string => typeof v === 'string')
      .flatMap((v) => [v.toLowerCase(), v.toUpperCase(), ` ${v}`, `${v}\u0000`, `${v}x`]);
    out.push(
      fc
        .oneof(
          fc.constantFrom(...NASTY_STRINGS, ...nearMisses),
          fc.string({ maxLength: 40 }),
          fc.string({ maxLength: 12, unit: 'binary' }),
        )
        .filter((s) => !stringSatisfies(s, { ...schema, maxLength: undefined, minLength: 0 })),
    );
  }
  return out.map((arb) => arb.filter((s) => !stringSatisfies(s, schema)));
}

/** A string that breaks the string constraints of `schema`; undefined when it has none. */
export function violatingString(schema: JsonSchema): fc.Arbitrary<string> | undefined {
  const out = stringViolations(schema);
  return out.length === 0 ? undefined : fc.oneof(...out);
}

/** Numbers that break the numeric constraints of `schema`. */
function numberViolations(schema: JsonSchema): fc.Arbitrary<number>[] {
  const out: fc.Arbitrary<number>[] = [];
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (types(schema)?.includes('integer') && !types(schema)?.includes('number'))
    out.push(fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => n + 0.5));
  if (minimum !== undefined) out.push(fc.nat(1_000_000).map((n) => minimum - 1 - n));
  if (maximum !== undefined) out.push(fc.nat(1_000_000).map((n) => maximum + 1 + n));
  if (exclusiveMinimum !== undefined) out.push(fc.nat(1000).map((n) => exclusiveMinimum - n));
  if (exclusiveMaximum !== undefined) out.push(fc.nat(1000).map((n) => exclusiveMaximum + n));
  return out;
}

/**
 * Values that no instance of `schema` can be: undefined when the schema admits anything
 * (`{}`), so there is nothing to violate.
 */
export function violating(schema: JsonSchema): fc.Arbitrary<unknown> | undefined {
  const out: fc.Arbitrary<unknown>[] = [];
  const allowed = allowedTypes(schema);
  if (allowed) {
    const wrong = (Object.keys(valueOfType) as JsonType[]).filter((t) => !allowed.has(t));
    if (wrong.length > 0) out.push(fc.constantFrom(...wrong).chain((t) => valueOfType[t]()));
  }
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) out.push(...unionViolations(branches));
  const listed = types(schema);
  if (listed?.length === 1) {
    switch (listed[0]) {
      case 'string':
        out.push(...stringViolations(schema));
        break;
      case 'integer':
      case 'number':
        out.push(...numberViolations(schema));
        break;
      case 'object':
        out.push(...objectViolations(schema));
        break;
      case 'array':
        out.push(...arrayViolations(schema));
        break;
      default:
        break;
    }
  } else if (listed === undefined && (schema.enum || 'const' in schema))
    out.push(...stringViolations(schema));
  return out.length === 0 ? undefined : fc.oneof(...out);
}

function objectViolations(schema: JsonSchema): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const base = plausibleObject(schema);
  if (schema.additionalProperties === false)
    out.push(
      fc
        .tuple(base, undeclaredKey([schema]), anyJson(1))
        .map(([o, key, v]) => ({ ...o, [key]: v })),
    );
  for (const key of schema.required ?? [])
    out.push(base.map(({ [key]: _dropped, ...rest }) => rest));
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const bad = violating(property);
    if (bad) out.push(fc.tuple(base, bad).map(([o, v]) => ({ ...o, [key]: v })));
  }
  return out;
}

function arrayViolations(schema: JsonSchema): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const items = schema.items ?? {};
  if (schema.minItems !== undefined && schema.minItems > 0) out.push(fc.constant([]));
  const { maxItems } = schema;
  if (maxItems !== undefined && maxItems <= 1000)
    out.push(plausible(items).map((v) => Array.from({ length: maxItems + 1 }, () => v)));
  const bad = violating(items);
  if (bad)
    out.push(
      fc
        .tuple(fc.array(plausible(items), { maxLength: 3 }), bad, fc.nat())
        .map(([list, v, at]) => list.toSpliced(at % (list.length + 1), 0, v)),
    );
  return out;
}

/** Values that break every branch of a union at once. */
function unionViolations(branches: readonly JsonSchema[]): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const objects = branches.every((b) => types(b)?.length === 1 && types(b)?.[0] === 'object');
  if (!objects || branches.length === 0) return out;
  const someBranch = fc.constantFrom(...branches).chain(plausibleObject);
  // every branch closed: a key none of them declares
  if (branches.every((b) => b.additionalProperties === false))
    out.push(
      fc
        .tuple(someBranch, undeclaredKey(branches), anyJson(1))
        .map(([o, key, v]) => ({ ...o, [key]: v })),
    );
  // a discriminator (a property that is a `const` in every branch) no branch names
  const first = branches[0]!;
  for (const key of Object.keys(first.properties ?? {})) {
    const consts = branches.map((b) => b.properties?.[key]);
    if (!consts.every((s) => s !== undefined && 'const' in s)) continue;
    const tag: JsonSchema = { enum: consts.map((s) => s!.const) };
    const bad = violating(tag);
    if (bad) out.push(fc.tuple(someBranch, bad).map(([o, v]) => ({ ...o, [key]: v })));
  }
  return out;
}
