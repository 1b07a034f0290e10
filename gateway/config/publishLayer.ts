/**
 * Publishing a configuration layer, written once for the two ways it happens: at once, by the
 * `PUT /api/v1/config/{scope}/{scope_key}` route, and later, when an approval releases a held
 * publish (governance/heldConfigLayers.ts). Both must sign the same document, emit the same
 * `config.published` event and drop the same cached ETags, or an approved layer would reach
 * devices differently from a direct one.
 */
import { randomUUID } from 'node:crypto';
import {
  contentChecksum,
  documentEtag,
  signedText,
  type CacheChange,
  type ConfigScope,
  type JsonObject,
  type CloudHandle,
} from '../../runtime/index.js';
import { type ConfigLayerRecord } from './store/configs/configLayer.js';
import { publishConfig } from './store/configs/publishConfig.js';
import { emitWebhookEvent } from '../webhooks/store/webhooks/index.js';
import type { Keyring } from '../keys.js';

/** A layer to publish. */
export interface LayerToPublish {
  scope: ConfigScope;
  scopeKey: string;
  config: JsonObject;
  createdBy: string;
}

/**
 * Publish `layer` as its scope's next version, signed with `keys`, in transaction `tx`: the
 * `config.published` event is enqueued with it and `changed` drops the cached ETags of the
 * devices it reaches (on every gateway, with the commit). A concurrent publish of the same
 * layer is a ConflictError.
 */
export async function publishLayer(
  tx: CloudHandle,
  changed: (change: CacheChange) => Promise<void>,
  keys: Keyring,
  layer: LayerToPublish,
  now: Date,
): Promise<ConfigLayerRecord> {
  const checksum = contentChecksum(layer.config);
  const published = await publishConfig(
    tx,
    {
      configId: randomUUID(),
      scope: layer.scope,
      scopeKey: layer.scopeKey,
      config: layer.config,
      createdBy: layer.createdBy,
    },
    ({ scope, scopeKey, version }) => {
      const document = {
        type: 'saffron.config-layer.v1',
        scope,
        scope_key: scopeKey,
        version,
        config: layer.config,
        checksum,
      };
      return {
        checksum,
        etag: documentEtag(document),
        signature: keys.sign(signedText(document)),
      };
    },
    now,
  );
  // subscribers hear of the new version with its commit (webhook outbox)
  await emitWebhookEvent(
    tx,
    'config.published',
    {
      config_id: published.configId,
      scope: published.scope,
      scope_key: published.scopeKey,
      version: published.version,
      etag: published.etag,
      checksum: published.checksum,
      published_by: published.createdBy,
    },
    now,
  );
  // cached ETags of the devices this layer reaches are dropped on every gateway
  await changed(
    layer.scope === 'device'
      ? { kind: 'devices', deviceIds: [layer.scopeKey] }
      : { kind: 'documents' },
  );
  return published;
}
