/**
 * Content hash of a normalized definition.
 *
 * Hashes identify a definition version across cloud and edge (config ETags, snapshots); two
 * files that differ only in key order or in spelling a default out must hash the same, so the
 * hash is taken over canonical JSON (sorted keys, no whitespace) of the *normalized* value.
 */
import { createHash } from 'node:crypto';
import type { WorkflowDefinition } from './types.js';

/**
 * Canonical JSON: object keys sorted, `undefined` members dropped, no whitespace.
 *
 * Written into one string as it walks, with no array per object or array beyond the keys:
 * every SAF record and signed document is canonicalized, and on a terminal that is on the
 * path of each payment.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value) as string | undefined;
    return text ?? 'null';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      out += (i === 0 ? '' : ',') + (item === undefined ? 'null' : canonicalJson(item));
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = sortedKeys(record);
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(member);
  }
  return out + '}';
}

/**
 * The keys of `record` in the order `sort()` gives (UTF-16 code units). Objects have a few
 * keys, often in order already: those are sorted in place by insertion, which allocates
 * nothing, where `sort()` copies the array first.
 */
function sortedKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record);
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** SHA-256 (hex) of the canonical JSON of a normalized definition. */
export function definitionHash(definition: WorkflowDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
