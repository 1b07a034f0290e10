/**
 * The JSON Schema subset Saffron supports for command payloads (command_versions): a small,
 * predictable part of draft 2020-12 that covers what payload contracts need and nothing an
 * operator could turn against the gateway — no `$ref` (no cycles, no remote fetches), no
 * `pattern` (no regular-expression denial of service), no combinators whose errors cannot
 * name one path.
 *
 * | keyword                | applies to        | meaning                                      |
 * |------------------------|-------------------|----------------------------------------------|
 * | `type`                 | any               | a type name or a list of them                |
 * | `enum`, `const`        | any               | one of the listed JSON values / exactly this |
 * | `properties`           | object            | a schema per named property                  |
 * | `required`             | object            | property names that must be present          |
 * | `additionalProperties` | object            | `false`, `true` or a schema for the others   |
 * | `items`                | array             | one schema for every element                 |
 * | `minItems`, `maxItems` | array             | length bounds                                |
 * | `minimum`, `maximum`   | number, integer   | inclusive bounds                             |
 * | `minLength`, `maxLength` | string          | length bounds, in Unicode code points        |
 *
 * Annotations (`$schema`, `$id`, `$comment`, `title`, `description`, `default`,
 * `examples`, `deprecated`) are accepted and ignored. Any other keyword is refused when the
 * schema is registered, so a schema never silently means less than its author thinks.
 */

/** The type names of `type`. */
export const JSON_SCHEMA_TYPES = [
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
  'null',
] as const;
/** A JSON Schema type name. */
export type JsonSchemaType = (typeof JSON_SCHEMA_TYPES)[number];

/** Keywords that constrain values. */
export const VALIDATION_KEYWORDS = [
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
] as const;

/** Keywords accepted and ignored. */
export const ANNOTATION_KEYWORDS = [
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
] as const;

/** A schema of the subset: `true`, `false`, or an object of the keywords above. */
export type JsonSchema = boolean | JsonSchemaObject;

/** A schema object of the subset. */
export interface JsonSchemaObject {
  type?: JsonSchemaType | JsonSchemaType[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

/** One problem, by JSON path (`$.payload.delay_seconds`, `$.items[2]`). */
export interface JsonSchemaIssue {
  path: string;
  message: string;
}

/** `base` extended by an object key. */
export const keyPath = (base: string, key: string): string => `${base}.${key}`;

/** `base` extended by an array index. */
export const indexPath = (base: string, index: number): string => `${base}[${index}]`;
