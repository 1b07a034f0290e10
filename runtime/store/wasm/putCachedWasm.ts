import { translateDriverError } from '../errors.js';
import type { EdgeHandle } from '../store.js';

/**
 * Store `bytes` in the edge's `device_wasm_cache` under `hash` (the caller has checked that
 * they hash to it). Returns false when the hash was already cached: the bytes are the same by
 * definition, so the existing row is kept.
 */
export async function putCachedWasm(
  h: EdgeHandle,
  hash: string,
  bytes: Uint8Array,
  now = new Date(),
): Promise<boolean> {
  try {
    const result = await h.edge
      .insertInto('device_wasm_cache')
      .values({ binary_hash: hash, binary_data: bytes, last_accessed: h.codec.time(now) })
      .onConflict((oc) => oc.column('binary_hash').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  } catch (error) {
    throw translateDriverError(error, `cache WASM binary ${hash}`);
  }
}
