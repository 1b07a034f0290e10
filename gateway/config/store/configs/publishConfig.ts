import { DEVICE_CONFIG_NAME, translateDriverError } from '../../../../runtime/index.js';
import type { ConfigScope, CloudHandle } from '../../../../runtime/index.js';
import { CONFIG_LAYER_COLUMNS, rowToConfigLayer, type ConfigLayerRecord } from './configLayer.js';

/** A layer to publish. */
export interface NewConfigLayer {
  configId: string;
  scope: ConfigScope;
  scopeKey: string;
  config: Record<string, unknown>;
  createdBy?: string;
}

/** Checksum, ETag and signature of a layer, computed once its version is known. */
export type LayerStamp = (layer: { scope: ConfigScope; scopeKey: string; version: number }) => {
  checksum: string;
  etag: string;
  signature: string;
};

/**
 * Publish a new version of a layer: version = newest + 1, the previous version stops being
 * current. Run it in a transaction. Two publishers racing for the same version collide on
 * the (config_name, scope, scope_key, version) key: the loser gets a ConflictError and its
 * transaction rolls back whole.
 */
export async function publishConfig(
  h: CloudHandle,
  layer: NewConfigLayer,
  stamp: LayerStamp,
  now: Date,
): Promise<ConfigLayerRecord> {
  try {
    const latest = await h.cloud
      .selectFrom('device_configs')
      .select((eb) => eb.fn.max('version').as('version'))
      .where('config_name', '=', DEVICE_CONFIG_NAME)
      .where('scope', '=', layer.scope)
      .where('scope_key', '=', layer.scopeKey)
      .executeTakeFirst();
    const version =
      (latest?.version === null || latest?.version === undefined
        ? 0
        : h.codec.parseInt(latest.version)) + 1;
    await h.cloud
      .updateTable('device_configs')
      .set({ is_current: h.codec.bool(false) })
      .where('config_name', '=', DEVICE_CONFIG_NAME)
      .where('scope', '=', layer.scope)
      .where('scope_key', '=', layer.scopeKey)
      .where('is_current', '=', h.codec.bool(true))
      .execute();
    const stamped = stamp({ scope: layer.scope, scopeKey: layer.scopeKey, version });
    const row = await h.cloud
      .insertInto('device_configs')
      .values({
        config_id: layer.configId,
        config_name: DEVICE_CONFIG_NAME,
        scope: layer.scope,
        scope_key: layer.scopeKey,
        version,
        config: h.codec.json(layer.config),
        checksum: stamped.checksum,
        etag: stamped.etag,
        signature: stamped.signature,
        is_current: h.codec.bool(true),
        created_by: layer.createdBy ?? null,
        created_at: h.codec.time(now),
      })
      .returning(CONFIG_LAYER_COLUMNS)
      .executeTakeFirstOrThrow();
    return rowToConfigLayer(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `publish ${layer.scope} config ${layer.scopeKey}`);
  }
}
