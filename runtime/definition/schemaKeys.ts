/**
 * The keys a schema accepts at a given place in a definition.
 *
 * Did-you-mean for an unknown key needs the keys that *would* have been valid there; reading
 * them from the zod schema itself (instead of a hand-kept table) means a field added to the
 * schema is suggested without touching this file.
 */
import type { z } from 'zod';
import type { PathSegment } from './path.js';
import { isRecord } from './values.js';

type AnySchema = z.core.$ZodType;

interface LooseDef {
  type: string;
  shape?: Record<string, AnySchema>;
  element?: AnySchema;
  valueType?: AnySchema;
  innerType?: AnySchema;
  in?: AnySchema;
  options?: readonly AnySchema[];
  discriminator?: string;
  getter?: () => AnySchema;
}

function defOf(schema: AnySchema): LooseDef {
  return schema._zod.def;
}

/** Strip wrappers (optional, default, lazy, pipe input, ...) down to a structural schema. */
function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (let depth = 0; depth < 20; depth++) {
    const def = defOf(current);
    const next =
      def.type === 'lazy' && def.getter
        ? def.getter()
        : def.type === 'pipe'
          ? def.in
          : def.innerType;
    if (next === undefined) return current;
    current = next;
  }
  return current;
}

/** For a (discriminated) union, the option that `value` selects, if one clearly does. */
function pickOption(def: LooseDef, value: unknown): AnySchema | undefined {
  const options = def.options ?? [];
  if (def.discriminator !== undefined && isRecord(value)) {
    const tag = value[def.discriminator];
    return options.find((option) => {
      const values = unwrap(option)._zod.propValues?.[def.discriminator ?? ''];
      return values?.has(tag as never) === true;
    });
  }
  return options.length === 1 ? options[0] : undefined;
}

/** The schema that governs the value at `path`, or undefined when it cannot be told. */
function schemaAt(
  root: AnySchema,
  input: unknown,
  path: readonly PathSegment[],
): AnySchema | undefined {
  let schema: AnySchema | undefined = unwrap(root);
  let value = input;
  for (const segment of path) {
    if (schema === undefined) return undefined;
    let def = defOf(schema);
    if (def.type === 'union') {
      schema = pickOption(def, value);
      if (schema === undefined) return undefined;
      schema = unwrap(schema);
      def = defOf(schema);
    }
    if (typeof segment === 'number' && def.type === 'array' && def.element) {
      schema = unwrap(def.element);
      value = Array.isArray(value) ? (value[segment] as unknown) : undefined;
    } else if (typeof segment === 'string' && def.type === 'object' && def.shape) {
      const field = def.shape[segment];
      schema = field === undefined ? undefined : unwrap(field);
      value = isRecord(value) ? value[segment] : undefined;
    } else if (typeof segment === 'string' && def.type === 'record' && def.valueType) {
      schema = unwrap(def.valueType);
      value = isRecord(value) ? value[segment] : undefined;
    } else {
      return undefined;
    }
  }
  if (schema !== undefined && defOf(schema).type === 'union') {
    const picked = pickOption(defOf(schema), value);
    return picked === undefined ? undefined : unwrap(picked);
  }
  return schema;
}

/** Keys accepted by the object schema at `path` (empty when it is not an object). */
export function keysAt(root: AnySchema, input: unknown, path: readonly PathSegment[]): string[] {
  const schema = schemaAt(root, input, path);
  const shape = schema === undefined ? undefined : defOf(schema).shape;
  return shape === undefined ? [] : Object.keys(shape);
}

/** Keys of each option of a discriminated union, by discriminator value. */
export function keysByOption(union: AnySchema): Map<string, string[]> {
  const result = new Map<string, string[]>();
  const def = defOf(unwrap(union));
  for (const option of def.options ?? []) {
    const object = unwrap(option);
    const tags = object._zod.propValues?.[def.discriminator ?? ''] ?? new Set();
    const shape = defOf(object).shape ?? {};
    for (const tag of tags) result.set(String(tag), Object.keys(shape));
  }
  return result;
}
