/**
 * One layer of device configuration: a JSON object published for the whole fleet
 * (scope_key '*'), a device type, or one device. Each publish is a new version; the newest
 * is `current`. Layers are immutable once written, so a layer's id names its content.
 */
import type { ConfigScope, Codec } from '../../../../runtime/index.js';

/** A configuration layer. */
export interface ConfigLayerRecord {
  configId: string;
  scope: ConfigScope;
  scopeKey: string;
  version: number;
  config: Record<string, unknown>;
  /** SHA-256 (hex) of the canonical JSON of `config`. */
  checksum: string;
  etag: string;
  /** The cloud's Ed25519 signature of the layer (audit: who published what). */
  signature: string;
  current: boolean;
  createdBy: string | null;
  createdAt: Date;
}

/** A device_configs row. */
export interface ConfigLayerRow {
  config_id: string;
  scope: string;
  scope_key: string;
  version: number;
  config: unknown;
  checksum: string;
  etag: string;
  signature: string;
  is_current: boolean | number;
  created_by: string | null;
  created_at: unknown;
}

/** The columns a layer read returns. */
export const CONFIG_LAYER_COLUMNS = [
  'config_id',
  'scope',
  'scope_key',
  'version',
  'config',
  'checksum',
  'etag',
  'signature',
  'is_current',
  'created_by',
  'created_at',
] as const;

/** Decode a layer row. */
export function rowToConfigLayer(codec: Codec, row: ConfigLayerRow): ConfigLayerRecord {
  return {
    configId: row.config_id,
    scope: row.scope as ConfigScope,
    scopeKey: row.scope_key,
    version: codec.parseInt(row.version),
    config: codec.parseJson(row.config) as Record<string, unknown>,
    checksum: row.checksum,
    etag: row.etag,
    signature: row.signature,
    current: codec.parseBool(row.is_current),
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
  };
}
