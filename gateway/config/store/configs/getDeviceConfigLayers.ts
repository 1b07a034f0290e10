import {
  DEVICE_CONFIG_NAME,
  CONFIG_SCOPES,
  translateDriverError,
} from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { CONFIG_LAYER_COLUMNS, rowToConfigLayer, type ConfigLayerRecord } from './configLayer.js';

/**
 * The current layers that apply to a device, least specific first: the fleet layer, the
 * layer of its device type (when it has one) and its own layer — each only if published.
 * One query.
 */
export async function getDeviceConfigLayers(
  h: CloudHandle,
  device: { deviceId: string; deviceType: string | null },
): Promise<ConfigLayerRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('device_configs')
      .select(CONFIG_LAYER_COLUMNS)
      .where('config_name', '=', DEVICE_CONFIG_NAME)
      .where('is_current', '=', h.codec.bool(true))
      .where((eb) =>
        eb.or([
          eb.and([eb('scope', '=', 'fleet'), eb('scope_key', '=', '*')]),
          ...(device.deviceType === null
            ? []
            : [eb.and([eb('scope', '=', 'device_type'), eb('scope_key', '=', device.deviceType)])]),
          eb.and([eb('scope', '=', 'device'), eb('scope_key', '=', device.deviceId)]),
        ]),
      )
      .execute();
    return rows
      .map((row) => rowToConfigLayer(h.codec, row))
      .sort((a, b) => CONFIG_SCOPES.indexOf(a.scope) - CONFIG_SCOPES.indexOf(b.scope));
  } catch (error) {
    throw translateDriverError(error, `get config layers of device ${device.deviceId}`);
  }
}
