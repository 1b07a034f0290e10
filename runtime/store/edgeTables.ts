/**
 * Kysely table types of the edge-only tables (SQLite): the store-and-forward queue, the
 * verified config cache, sync bookkeeping, hot-deployed workflows and the WASM cache.
 * Conventions as in database.ts.
 */
import type { ColumnType } from 'kysely';
import type { DefaultInt, DefaultTime, JsonColumn, NullableTime } from './database.js';

/** BIGINT: may arrive as a string. */
type BigIntColumn = ColumnType<number | string, number, number>;

/** saf_pending_transactions row. */
export interface SafPendingTransactionsTable {
  workflow_id: string;
  device_id: string;
  sequence_number: BigIntColumn;
  idempotency_key: string;
  workflow_type: string;
  workflow_version: string | null;
  amount_minor: ColumnType<number | string | null, number | null | undefined, number | null>;
  currency: string | null;
  record: JsonColumn;
  signature: string;
  status: ColumnType<string, string | undefined, string>;
  upload_attempts: DefaultInt;
  last_error: string | null;
  created_at: DefaultTime;
  synced_at: NullableTime;
}

/** device_config_cache row. */
export interface DeviceConfigCacheTable {
  config_name: string;
  etag: string;
  version: number | null;
  config: JsonColumn;
  checksum: string;
  signature: string;
  fetched_at: DefaultTime;
  applied_at: NullableTime;
}

/** edge_sync_state row. */
export interface EdgeSyncStateTable {
  key: string;
  value: JsonColumn;
  updated_at: DefaultTime;
}

/** edge_workflow_cache row. */
export interface EdgeWorkflowCacheTable {
  workflow_type: string;
  workflow_version: string | null;
  yaml: string;
  definition_hash: string;
  source_command_id: string | null;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/** device_wasm_cache row (edge copies of WebAssembly binaries). */
export interface DeviceWasmCacheTable {
  binary_hash: string;
  binary_data: Uint8Array;
  last_accessed: DefaultTime;
}
