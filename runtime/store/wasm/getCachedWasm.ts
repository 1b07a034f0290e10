import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { EdgeHandle } from '../store.js';

/** The bytes cached on the edge under SHA-256 `hash`, if any. */
export async function getCachedWasm(h: EdgeHandle, hash: string): Promise<Uint8Array | undefined> {
  try {
    const [row] = (
      await executeCached(h, 'getCachedWasm', [hash], () =>
        h.edge
          .selectFrom('device_wasm_cache')
          .select('binary_data')
          .where('binary_hash', '=', hash),
      )
    ).rows;
    return row?.binary_data;
  } catch (error) {
    throw translateDriverError(error, `read cached WASM binary ${hash}`);
  }
}

/** Record that the cached binary `hash` was used at `now` (for least-recently-used eviction). */
export async function touchCachedWasm(h: EdgeHandle, hash: string, now: Date): Promise<void> {
  try {
    await h.edge
      .updateTable('device_wasm_cache')
      .set({ last_accessed: h.codec.time(now) })
      .where('binary_hash', '=', hash)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `touch cached WASM binary ${hash}`);
  }
}
