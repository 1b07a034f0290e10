/**
 * The cloud public key a device verifies configuration, workflow definitions and commands
 * with.
 *
 * A key given to the agent (a file provisioned with the device) is used and pinned, and
 * nothing is ever fetched. Without one, the agent asks the cloud once (`GET
 * /api/v1/config/public-key`, a signed device request) and pins the answer in
 * `edge_sync_state`; from then on the pinned key is used and never fetched again. So a
 * cloud, or a network path, that later starts handing out another key cannot make the device
 * accept documents signed with it. That first answer is trusted blind, though — whoever
 * answered it first is trusted for good — which is why a provisioned key is the way to run
 * a terminal (the agent warns without one).
 *
 * A provisioned key must agree with what the device pinned: a key pinned from the cloud that
 * differs from the provisioned one means either a wrong key file or a device that talked to
 * another cloud, and the agent refuses to start (CONFIG_PUBLIC_KEY_MISMATCH) rather than
 * guess which. A provisioned key replacing an earlier provisioned one is a key rotation and
 * is pinned.
 */
import { createHash, createPublicKey } from 'node:crypto';
import type { EdgeStore } from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { readSyncState, SYNC_STATE_KEYS, writeSyncState } from '../state/syncState.js';
import { ConfigError } from './errors.js';

/** The pinned key, as stored under `SYNC_STATE_KEYS.cloudPublicKey`. */
export interface PinnedPublicKey {
  public_key_pem: string;
  /** SHA-256 (hex) of the key's SPKI DER: the cloud's `key_id`. */
  key_id: string;
  pinned_at: string;
  /** Where the pinned key came from. */
  origin: 'configured' | 'cloud';
}

/** The key to verify with, and how it was found. */
export interface ResolvedPublicKey {
  publicKeyPem: string;
  keyId: string;
  /** `configured`: given to the agent; `pinned`: pinned earlier; `fetched`: fetched and pinned now. */
  source: 'configured' | 'pinned' | 'fetched';
}

/** What {@link resolveCloudPublicKey} needs. */
export interface ResolvePublicKeyDeps {
  store: EdgeStore;
  /** Used only when no key is configured or pinned. */
  cloud: CloudClient;
  /** A PEM key provisioned with the device (e.g. read from a file); wins over a pinned one. */
  configuredPem?: string;
  now?: () => Date;
  signal?: AbortSignal;
}

/** The key id of an Ed25519 public key in PEM; throws CONFIG_PUBLIC_KEY_INVALID otherwise. */
export function ed25519KeyId(publicKeyPem: string): string {
  let key;
  try {
    key = createPublicKey(publicKeyPem);
  } catch (error) {
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the cloud public key is not a PEM key', {
      cause: error,
    });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new ConfigError(
      'CONFIG_PUBLIC_KEY_INVALID',
      `the cloud public key is ${String(key.asymmetricKeyType)}, not Ed25519`,
    );
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

/**
 * The PEM key in a provisioned key file's `text`: either a PEM public key, or the JSON the
 * cloud publishes at `GET /api/v1/config/public-key` (`{algorithm, public_key_pem, key_id}`,
 * whose `key_id` must then match the key). Throws CONFIG_PUBLIC_KEY_INVALID otherwise.
 */
export function parseCloudPublicKey(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) {
    ed25519KeyId(trimmed);
    return `${trimmed}\n`;
  }
  let body: { public_key_pem?: unknown; key_id?: unknown };
  try {
    body = JSON.parse(trimmed) as typeof body;
  } catch (error) {
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the key file is neither PEM nor JSON', {
      cause: error,
    });
  }
  if (typeof body.public_key_pem !== 'string')
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the key file has no public_key_pem');
  const keyId = ed25519KeyId(body.public_key_pem);
  if (body.key_id !== undefined && body.key_id !== keyId)
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the key id does not match the key');
  return body.public_key_pem;
}

async function fetchPublicKey(cloud: CloudClient, signal?: AbortSignal): Promise<string> {
  let response: Response;
  try {
    response = await cloud.request({
      path: '/api/v1/config/public-key',
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    throw new ConfigError('CONFIG_PUBLIC_KEY_UNAVAILABLE', 'could not reach the cloud', {
      cause: error,
      retryable: true,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new ConfigError(
      'CONFIG_PUBLIC_KEY_UNAVAILABLE',
      `the cloud answered ${response.status} to the public key request`,
      { retryable: response.status >= 500 || response.status === 429 },
    );
  }
  const body = (await response.json().catch(() => null)) as {
    public_key_pem?: unknown;
    key_id?: unknown;
  } | null;
  if (typeof body?.public_key_pem !== 'string')
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the public key answer has no PEM key');
  if (typeof body.key_id === 'string' && body.key_id !== ed25519KeyId(body.public_key_pem))
    throw new ConfigError('CONFIG_PUBLIC_KEY_INVALID', 'the key id does not match the key');
  return body.public_key_pem;
}

/**
 * The cloud public key to verify configuration with: the configured one (pinned, replacing
 * a pinned one that differs), else the pinned one, else the cloud's, fetched and pinned now.
 */
export async function resolveCloudPublicKey(
  deps: ResolvePublicKeyDeps,
): Promise<ResolvedPublicKey> {
  const now = deps.now ?? (() => new Date());
  const pinned = (await readSyncState(deps.store, SYNC_STATE_KEYS.cloudPublicKey))?.value as
    PinnedPublicKey | undefined;
  const pin = async (publicKeyPem: string, origin: PinnedPublicKey['origin']) => {
    const keyId = ed25519KeyId(publicKeyPem);
    if (pinned?.key_id !== keyId) {
      const at = now();
      const value: PinnedPublicKey = {
        public_key_pem: publicKeyPem,
        key_id: keyId,
        pinned_at: at.toISOString(),
        origin,
      };
      await writeSyncState(deps.store, SYNC_STATE_KEYS.cloudPublicKey, value, at);
    }
    return keyId;
  };
  if (deps.configuredPem !== undefined) {
    const configuredId = ed25519KeyId(deps.configuredPem);
    if (pinned && pinned.origin !== 'configured' && pinned.key_id !== configuredId)
      throw new ConfigError(
        'CONFIG_PUBLIC_KEY_MISMATCH',
        `the provisioned cloud public key (key id ${configuredId}) is not the key this device pinned from the cloud on first use (key id ${pinned.key_id}): check the key file against the cloud's GET /api/v1/config/public-key; if the pinned key is the wrong one, provision this device again`,
      );
    const keyId = await pin(deps.configuredPem, 'configured');
    return { publicKeyPem: deps.configuredPem, keyId, source: 'configured' };
  }
  if (typeof pinned?.public_key_pem === 'string')
    return {
      publicKeyPem: pinned.public_key_pem,
      keyId: ed25519KeyId(pinned.public_key_pem),
      source: 'pinned',
    };
  const fetched = await fetchPublicKey(deps.cloud, deps.signal);
  const keyId = await pin(fetched, 'cloud');
  return { publicKeyPem: fetched, keyId, source: 'fetched' };
}
