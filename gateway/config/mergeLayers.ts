/**
 * Effective device configuration: the layers that apply to a device, least specific first
 * (fleet, device type, device), each applied to the result of the previous ones as a JSON
 * Merge Patch (RFC 7386). So objects merge key by key at every depth, arrays and scalars in
 * a more specific layer replace the inherited value whole, and `null` removes an inherited
 * key. Merging (not replacing) lets the fleet layer carry defaults that a device type or a
 * single device overrides one key at a time.
 */

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Apply `patch` to `target` (RFC 7386); neither argument is modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = {};
  if (isObject(target))
    for (const [key, value] of Object.entries(target)) define(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else
      define(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

/** Own data property, even for a key such as `__proto__`. */
function define(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Merge layers, least specific first, into one configuration object. */
export function mergeLayers(layers: readonly JsonObject[]): JsonObject {
  return layers.reduce<JsonObject>((merged, layer) => mergePatch(merged, layer) as JsonObject, {});
}
