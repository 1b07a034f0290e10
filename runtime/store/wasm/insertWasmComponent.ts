import { translateDriverError } from '../errors.js';
import type { CloudHandle } from '../store.js';

/** A registry row to insert; timestamps default to now. */
export interface NewWasmComponent {
  id: string;
  name: string;
  versionTag: string;
  binaryHash: string;
  blobStoragePath: string;
  description?: string | null;
  inputSchema?: string | null;
  outputSchema?: string | null;
  sizeBytes: number;
}

/** Insert a `wasm_components` row. A hash already registered is a ConflictError. */
export async function insertWasmComponent(h: CloudHandle, c: NewWasmComponent): Promise<void> {
  try {
    await h.cloud
      .insertInto('wasm_components')
      .values({
        id: c.id,
        name: c.name,
        version_tag: c.versionTag,
        binary_hash: c.binaryHash,
        blob_storage_path: c.blobStoragePath,
        description: c.description ?? null,
        input_schema: c.inputSchema ?? null,
        output_schema: c.outputSchema ?? null,
        size_bytes: c.sizeBytes,
      })
      .execute();
  } catch (error) {
    throw translateDriverError(error, `register WASM binary ${c.binaryHash}`);
  }
}
