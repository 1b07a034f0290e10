/**
 * Checking a schema before it is stored: every keyword belongs to the supported subset
 * (subset.ts) and has a value of the right shape, bounds are ordered, and the document is
 * bounded in depth and size — so validating a payload against a stored schema can neither
 * fail on the schema itself nor take unbounded work.
 */
import {
  ANNOTATION_KEYWORDS,
  JSON_SCHEMA_TYPES,
  keyPath,
  VALIDATION_KEYWORDS,
  type JsonSchemaIssue,
} from './subset.js';

/** Deepest nesting of schemas accepted. */
export const MAX_SCHEMA_DEPTH = 32;
/** Most schema objects in one document. */
export const MAX_SCHEMA_NODES = 2000;

const KNOWN = new Set<string>([...VALIDATION_KEYWORDS, ...ANNOTATION_KEYWORDS]);
const TYPES = new Set<string>(JSON_SCHEMA_TYPES);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * Problems of `schema` as a schema of the supported subset, by path under `base` (empty when
 * it is sound). At most 50 are reported.
 */
export function checkJsonSchema(schema: unknown, base = '$'): JsonSchemaIssue[] {
  const issues: JsonSchemaIssue[] = [];
  let nodes = 0;
  const add = (path: string, message: string) => {
    if (issues.length < 50) issues.push({ path, message });
  };

  const visit = (node: unknown, path: string, depth: number): void => {
    if (typeof node === 'boolean') return;
    if (!isObject(node)) return add(path, 'a schema is an object or a boolean');
    if (depth > MAX_SCHEMA_DEPTH)
      return add(path, `schemas may nest at most ${MAX_SCHEMA_DEPTH} levels`);
    if (++nodes > MAX_SCHEMA_NODES)
      return add(path, `a schema may hold at most ${MAX_SCHEMA_NODES} schema objects`);
    for (const [keyword, value] of Object.entries(node)) {
      const at = keyPath(path, keyword);
      if (!KNOWN.has(keyword)) {
        add(at, `unsupported keyword '${keyword}' (supported: ${VALIDATION_KEYWORDS.join(', ')})`);
        continue;
      }
      switch (keyword) {
        case 'type': {
          const names = Array.isArray(value) ? value : [value];
          if (names.length === 0 || names.some((n) => typeof n !== 'string' || !TYPES.has(n)))
            add(at, `type must be one of ${JSON_SCHEMA_TYPES.join(', ')}, or a list of them`);
          else if (new Set(names).size !== names.length) add(at, 'type lists a name twice');
          break;
        }
        case 'enum':
          if (!Array.isArray(value) || value.length === 0) add(at, 'enum must be a non-empty list');
          break;
        case 'properties':
          if (!isObject(value)) add(at, 'properties must be an object of schemas');
          else
            for (const [name, sub] of Object.entries(value))
              visit(sub, keyPath(at, name), depth + 1);
          break;
        case 'required':
          if (
            !Array.isArray(value) ||
            value.some((n) => typeof n !== 'string') ||
            new Set(value).size !== value.length
          )
            add(at, 'required must be a list of distinct property names');
          break;
        case 'additionalProperties':
        case 'items':
          visit(value, at, depth + 1);
          break;
        case 'minItems':
        case 'maxItems':
        case 'minLength':
        case 'maxLength':
          if (!isCount(value)) add(at, `${keyword} must be a non-negative integer`);
          break;
        case 'minimum':
        case 'maximum':
          if (typeof value !== 'number' || !Number.isFinite(value))
            add(at, `${keyword} must be a finite number`);
          break;
        default:
          break; // const and annotations take any value
      }
    }
    const ordered = (low: string, high: string) => {
      const a = node[low];
      const b = node[high];
      if (typeof a === 'number' && typeof b === 'number' && a > b)
        add(keyPath(path, low), `${low} is greater than ${high}`);
    };
    ordered('minimum', 'maximum');
    ordered('minLength', 'maxLength');
    ordered('minItems', 'maxItems');
  };

  visit(schema, base, 0);
  return issues;
}
