import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { EdgeHandle } from '../store.js';

/** One binary in the edge's `device_wasm_cache`, without its bytes. */
export interface CachedWasm {
  binaryHash: string;
  sizeBytes: number;
  lastAccessed: Date;
}

/** Every cached binary, most recently used first. */
export async function listCachedWasm(h: EdgeHandle): Promise<CachedWasm[]> {
  try {
    const rows = await h.edge
      .selectFrom('device_wasm_cache')
      .select([
        'binary_hash',
        'last_accessed',
        sql<number | string>`length(binary_data)`.as('size_bytes'),
      ])
      .orderBy('last_accessed', 'desc')
      .orderBy('binary_hash')
      .execute();
    return rows.map((r) => ({
      binaryHash: r.binary_hash,
      sizeBytes: h.codec.parseInt(r.size_bytes),
      lastAccessed: h.codec.parseTime(r.last_accessed),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list cached WASM binaries');
  }
}
