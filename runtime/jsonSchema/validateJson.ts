/**
 * Validating a JSON value against a schema of the supported subset (subset.ts) that
 * {@link checkJsonSchema} accepted. Every failing value is reported by its JSON path, not
 * only the first, so a caller can fix a payload in one round trip; the list is capped.
 *
 * Numbers: `integer` is a number without a fractional part (`1.0` is one, as JSON Schema
 * says); `number` includes integers. Lengths count Unicode code points, not UTF-16 units.
 * `enum` and `const` compare JSON values structurally (object key order does not matter).
 */
import { checkJsonSchema } from './checkJsonSchema.js';
import {
  indexPath,
  keyPath,
  type JsonSchemaIssue,
  type JsonSchemaObject,
  type JsonSchemaType,
} from './subset.js';

/** Most issues one validation reports. */
export const MAX_REPORTED_ISSUES = 50;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function typeOf(value: unknown): JsonSchemaType | 'unsupported' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isFinite(value)
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : 'unsupported';
    case 'object':
      return 'object';
    default:
      return 'unsupported';
  }
}

const hasType = (value: unknown, type: JsonSchemaType): boolean => {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
};

/** Structural equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/**
 * The problems of `value` under `schema`, by path under `base` (empty when it is valid).
 * `schema` must be one {@link checkJsonSchema} accepts; an unsupported one throws.
 */
export function validateJson(schema: unknown, value: unknown, base = '$'): JsonSchemaIssue[] {
  const schemaIssues = checkJsonSchema(schema);
  if (schemaIssues.length > 0)
    throw new TypeError(
      `not a supported schema: ${schemaIssues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    );
  const issues: JsonSchemaIssue[] = [];
  const add = (path: string, message: string) => {
    if (issues.length < MAX_REPORTED_ISSUES) issues.push({ path, message });
  };

  const visit = (node: unknown, v: unknown, path: string): void => {
    if (issues.length >= MAX_REPORTED_ISSUES || node === true) return;
    if (node === false) return add(path, 'no value is allowed here');
    const s = node as JsonSchemaObject;
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => hasType(v, t))) {
        const actual = typeOf(v);
        return add(path, `expected ${types.join(' or ')}, got ${actual}`);
      }
    }
    if (s.enum !== undefined && !s.enum.some((e) => jsonEqual(e, v)))
      add(path, `must be one of ${s.enum.map(show).join(', ')}`);
    if (Object.hasOwn(s, 'const') && !jsonEqual(s.const, v)) add(path, `must be ${show(s.const)}`);
    if (typeof v === 'number') {
      if (s.minimum !== undefined && v < s.minimum) add(path, `must be at least ${s.minimum}`);
      if (s.maximum !== undefined && v > s.maximum) add(path, `must be at most ${s.maximum}`);
    }
    if (typeof v === 'string' && (s.minLength !== undefined || s.maxLength !== undefined)) {
      const length = [...v].length;
      if (s.minLength !== undefined && length < s.minLength)
        add(path, `must be at least ${s.minLength} characters long`);
      if (s.maxLength !== undefined && length > s.maxLength)
        add(path, `must be at most ${s.maxLength} characters long`);
    }
    if (Array.isArray(v)) {
      if (s.minItems !== undefined && v.length < s.minItems)
        add(path, `must have at least ${s.minItems} items`);
      if (s.maxItems !== undefined && v.length > s.maxItems)
        add(path, `must have at most ${s.maxItems} items`);
      if (s.items !== undefined) v.forEach((item, i) => visit(s.items, item, indexPath(path, i)));
    }
    if (isObject(v)) {
      for (const name of s.required ?? [])
        if (!Object.hasOwn(v, name)) add(keyPath(path, name), 'is required');
      const properties = s.properties ?? {};
      for (const [name, item] of Object.entries(v)) {
        const at = keyPath(path, name);
        if (Object.hasOwn(properties, name)) visit(properties[name], item, at);
        else if (s.additionalProperties === false) add(at, 'is not an allowed property');
        else if (s.additionalProperties !== undefined) visit(s.additionalProperties, item, at);
      }
    }
  };

  visit(schema, value, base);
  return issues;
}
