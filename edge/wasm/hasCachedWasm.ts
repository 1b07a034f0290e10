import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** Whether `device_wasm_cache` holds binary `hash` (without reading its bytes). */
export async function hasCachedWasm(h: EdgeHandle, hash: string): Promise<boolean> {
  try {
    const row = await h.edge
      .selectFrom('device_wasm_cache')
      .select('binary_hash')
      .where('binary_hash', '=', hash)
      .executeTakeFirst();
    return row !== undefined;
  } catch (error) {
    throw translateDriverError(error, `look up cached WASM binary ${hash}`);
  }
}
