import { DEVICE_CONFIG_NAME, translateDriverError } from '../../../../runtime/index.js';
import type { ConfigScope, CloudHandle } from '../../../../runtime/index.js';
import { CONFIG_LAYER_COLUMNS, rowToConfigLayer, type ConfigLayerRecord } from './configLayer.js';

/** One layer: its current version, or `version` when given; undefined when there is none. */
export async function getConfigLayer(
  h: CloudHandle,
  scope: ConfigScope,
  scopeKey: string,
  version?: number,
): Promise<ConfigLayerRecord | undefined> {
  let query = h.cloud
    .selectFrom('device_configs')
    .select(CONFIG_LAYER_COLUMNS)
    .where('config_name', '=', DEVICE_CONFIG_NAME)
    .where('scope', '=', scope)
    .where('scope_key', '=', scopeKey);
  query =
    version === undefined
      ? query.where('is_current', '=', h.codec.bool(true))
      : query.where('version', '=', version);
  try {
    const row = await query.executeTakeFirst();
    return row && rowToConfigLayer(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get ${scope} config ${scopeKey}`);
  }
}
