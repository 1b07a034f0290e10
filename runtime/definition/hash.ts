/**
 * Content hash of a normalized definition.
 *
 * Hashes identify a definition version across cloud and edge (config ETags, snapshots); two
 * files that differ only in key order or in spelling a default out must hash the same, so the
 * hash is taken over canonical JSON (sorted keys, no whitespace) of the *normalized* value.
 */
import { createHash } from 'node:crypto';
import type { WorkflowDefinition } from './types.js';

/** Canonical JSON: object keys sorted, `undefined` members dropped, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value) as string | undefined;
    return text ?? 'null';
  }
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/** SHA-256 (hex) of the canonical JSON of a normalized definition. */
export function definitionHash(definition: WorkflowDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
