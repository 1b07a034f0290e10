/**
 * What changed between two payload schemas, for the changelog: top-level properties added
 * and removed, properties that became required or optional, properties whose schema changed,
 * and whether unknown properties are now refused or allowed. A summary an operator can read
 * in the changelog — the full schemas stay available on each version.
 */
import { jsonEqual } from '../../runtime/index.js';

/** A changelog summary of a schema change. */
export interface SchemaChange {
  added_properties: string[];
  removed_properties: string[];
  newly_required: string[];
  no_longer_required: string[];
  changed_properties: string[];
  additional_properties: 'unchanged' | 'now_refused' | 'now_allowed' | 'changed';
  /** True when a payload valid before may be refused now. */
  breaking: boolean;
}

/** Root keywords other than the ones summarised property by property. */
const ROOT_KEYWORDS = [
  'type',
  'enum',
  'const',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'items',
  'minItems',
  'maxItems',
];

const objectOf = (schema: unknown): Record<string, unknown> =>
  typeof schema === 'object' && schema !== null && !Array.isArray(schema)
    ? (schema as Record<string, unknown>)
    : {};

const propertiesOf = (schema: unknown): Record<string, unknown> =>
  objectOf(objectOf(schema).properties);

const requiredOf = (schema: unknown): string[] => {
  const required = objectOf(schema).required;
  return Array.isArray(required) ? required.map(String) : [];
};

/** The change from `before` to `after` (`before` null for a first version). */
export function describeSchemaChange(before: unknown, after: unknown): SchemaChange {
  const [p0, p1] = [propertiesOf(before), propertiesOf(after)];
  const [r0, r1] = [requiredOf(before), requiredOf(after)];
  const k0 = Object.keys(p0);
  const k1 = Object.keys(p1);
  const extra0 = objectOf(before).additionalProperties;
  const extra1 = objectOf(after).additionalProperties;
  const additional = jsonEqual(extra0 ?? true, extra1 ?? true)
    ? 'unchanged'
    : extra1 === false
      ? 'now_refused'
      : extra1 === true || extra1 === undefined
        ? 'now_allowed'
        : 'changed';
  const change: Omit<SchemaChange, 'breaking'> = {
    added_properties: k1.filter((k) => !(k in p0)).sort(),
    removed_properties: k0.filter((k) => !(k in p1)).sort(),
    newly_required: r1.filter((k) => !r0.includes(k)).sort(),
    no_longer_required: r0.filter((k) => !r1.includes(k)).sort(),
    changed_properties: k1.filter((k) => k in p0 && !jsonEqual(p0[k], p1[k])).sort(),
    additional_properties: additional,
  };
  const rootChanged = ROOT_KEYWORDS.some(
    (k) => !jsonEqual(objectOf(before)[k] ?? null, objectOf(after)[k] ?? null),
  );
  return {
    ...change,
    breaking:
      before !== null &&
      (change.newly_required.length > 0 ||
        change.changed_properties.length > 0 ||
        (change.removed_properties.length > 0 && extra1 !== undefined && extra1 !== true) ||
        additional === 'now_refused' ||
        additional === 'changed' ||
        rootChanged),
  };
}
