import { translateDriverError } from '../errors.js';
import type { CloudHandle } from '../store.js';
import { rowToWasmComponent, type WasmComponent } from './record.js';

/** Registered binaries — all, or those named `name` — by name, then oldest first. */
export async function listWasmComponents(
  h: CloudHandle,
  filter: { name?: string } = {},
): Promise<WasmComponent[]> {
  try {
    let query = h.cloud.selectFrom('wasm_components').selectAll();
    if (filter.name !== undefined) query = query.where('name', '=', filter.name);
    const rows = await query.orderBy('name').orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => rowToWasmComponent(h, row));
  } catch (error) {
    throw translateDriverError(error, 'list WASM binaries');
  }
}
