/** A row of the cloud `wasm_components` registry, as the runtime reads it. */
import type { Selectable } from 'kysely';
import type { WasmComponentsTable } from '../database.js';
import type { StoreHandle } from '../store.js';

/** One registered WebAssembly binary (a `wasm_components` row). */
export interface WasmComponent {
  id: string;
  name: string;
  /** Semantic version, e.g. `1.4.0`. */
  versionTag: string;
  /** SHA-256 of the bytes, 64 lowercase hex characters: the binary's address. */
  binaryHash: string;
  /** Where the bytes are, under `WASM_STORAGE_DIR`. */
  blobStoragePath: string;
  description: string | null;
  /** JSON Schema of the module's stdin, as JSON text. */
  inputSchema: string | null;
  /** JSON Schema of the module's stdout, as JSON text. */
  outputSchema: string | null;
  sizeBytes: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Decode a selected row. */
export function rowToWasmComponent(
  h: StoreHandle,
  row: Selectable<WasmComponentsTable>,
): WasmComponent {
  return {
    id: row.id,
    name: row.name,
    versionTag: row.version_tag,
    binaryHash: row.binary_hash,
    blobStoragePath: row.blob_storage_path,
    description: row.description,
    inputSchema: row.input_schema,
    outputSchema: row.output_schema,
    sizeBytes: row.size_bytes === null ? null : h.codec.parseInt(row.size_bytes),
    createdAt: h.codec.parseTime(row.created_at),
    updatedAt: h.codec.parseTime(row.updated_at),
  };
}
