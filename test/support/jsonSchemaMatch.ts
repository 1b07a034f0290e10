/**
 * Does a JSON value satisfy a schema of the gateway's OpenAPI document? The keywords
 * `z.toJSONSchema` emits for response bodies — types, enums, objects, arrays, unions, string
 * and number bounds — checked by hand, so the test reads the document as a client
 * generator would, without a validator of its own drift. Formats and patterns are not
 * checked (responses are built by the server, not parsed from text).
 */
import type { JsonSchema } from './schemaFuzz.js';

const typeOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value;

/** Where `value` breaks `schema` (`$.a[0]: …`), or an empty list when it satisfies it. */
export function schemaMismatches(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const each = branches.map((branch) => schemaMismatches(branch, value, path));
    return each.some((m) => m.length === 0)
      ? []
      : [`${path}: matches no branch (${each.flat()[0]})`];
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    return [`${path}: is not ${JSON.stringify(schema.const)}`];
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    return [`${path}: is not one of ${JSON.stringify(schema.enum)}`];
  if (schema.type !== undefined) {
    const allowed = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = typeOf(value);
    if (!allowed.some((t) => t === actual || (t === 'number' && actual === 'integer')))
      return [`${path}: is ${actual}, the document says ${allowed.join(' | ')}`];
  }
  const out: string[] = [];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? [])
      if (!(key in object)) out.push(`${path}.${key}: is missing`);
    for (const [key, item] of Object.entries(object)) {
      const declared = schema.properties?.[key];
      if (declared) out.push(...schemaMismatches(declared, item, `${path}.${key}`));
      else if (schema.additionalProperties === false)
        out.push(`${path}.${key}: is not in the document`);
      else if (typeof schema.additionalProperties === 'object')
        out.push(...schemaMismatches(schema.additionalProperties, item, `${path}.${key}`));
    }
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, i) => out.push(...schemaMismatches(schema.items!, item, `${path}[${i}]`)));
  return out;
}
