import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { rowToWasmComponent, type WasmComponent } from './record.js';

/** Registered binaries — all, or those named `name` — by name, then oldest first. */
export async function listWasmComponents(
  h: StoreHandle,
  filter: { name?: string } = {},
): Promise<WasmComponent[]> {
  try {
    let query = h.db.selectFrom('wasm_components').selectAll();
    if (filter.name !== undefined) query = query.where('name', '=', filter.name);
    const rows = await query.orderBy('name').orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => rowToWasmComponent(h, row));
  } catch (error) {
    throw translateDriverError(error, 'list WASM binaries');
  }
}
