import { translateDriverError } from '../errors.js';
import type { CloudHandle } from '../store.js';
import { rowToWasmComponent, type WasmComponent } from './record.js';

/** The registry row of the binary with SHA-256 `hash`, if registered. */
export async function getWasmComponent(
  h: CloudHandle,
  hash: string,
): Promise<WasmComponent | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('wasm_components')
      .selectAll()
      .where('binary_hash', '=', hash)
      .executeTakeFirst();
    return row ? rowToWasmComponent(h, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `read WASM binary ${hash}`);
  }
}
