/**
 * Device credentials held in memory, so that authenticating a device's request needs no
 * database read: per device, its current secret and the previous one with the end of its
 * grace period, opened once (the store keeps them sealed). Unknown devices are kept too, as
 * "no secret", so a known and an unknown device cost the same: the first request for either
 * reads the database, later ones within the TTL do not. What the cache does reveal, by
 * timing, is whether a device id was asked for recently — not whether it exists.
 *
 * Entries are dropped by the change bus when a device is registered, rotated, changed or
 * deleted (on any gateway), and every entry expires after `ttlMs` regardless; while the
 * bus cannot hear other gateways nothing is kept. So a rotated or deleted device's old
 * secret is accepted here at most for the notification's delay after the commit, and never
 * longer than `ttlMs`.
 */
import { getDeviceCredentials, type CacheChange, type Store } from '../../runtime/index.js';
import { createInvalidatingCache, type CacheBounds } from '../cache/invalidatingCache.js';
import type { Keyring } from '../keys.js';

/** The credentials of devices, read through. */
export interface CredentialCache {
  /** The secrets `deviceId` may sign with at `nowMs`: none when the device is unknown. */
  secrets(deviceId: string, nowMs: number): Promise<string[]>;
  /** Drop what `change` names; everything when undefined. */
  apply(change: CacheChange | undefined): void;
}

interface Opened {
  secret: string | null;
  previous: string | null;
  previousExpiresMs: number;
}

/** A credential cache over `store`, keeping entries while `trusted()`. */
export function createCredentialCache(
  store: Store,
  keys: Keyring,
  trusted: () => boolean,
  bounds: CacheBounds = {},
): CredentialCache {
  const cache = createInvalidatingCache<Opened | null>({
    maxEntries: bounds.maxEntries ?? 100_000,
    ttlMs: bounds.ttlMs ?? 30_000,
    trusted,
  });
  const read = async (deviceId: string): Promise<Opened | null> => {
    const sealed = await getDeviceCredentials(store, deviceId);
    if (!sealed) return null;
    return {
      secret: sealed.secretCiphertext === null ? null : keys.open(sealed.secretCiphertext),
      previous:
        sealed.previousSecretCiphertext === null || sealed.previousExpiresAt === null
          ? null
          : keys.open(sealed.previousSecretCiphertext),
      previousExpiresMs: sealed.previousExpiresAt?.getTime() ?? 0,
    };
  };
  return {
    async secrets(deviceId, nowMs) {
      let found = cache.get(deviceId); // null: kept as unknown
      if (found === undefined)
        found = await cache.fill(
          deviceId,
          () => read(deviceId),
          (opened) => opened,
        );
      const secrets: string[] = [];
      if (found?.secret) secrets.push(found.secret);
      if (found?.previous && found.previousExpiresMs > nowMs) secrets.push(found.previous);
      return secrets;
    },
    apply(change) {
      if (change === undefined) cache.clear();
      else if (change.kind === 'devices') change.deviceIds.forEach((id) => cache.invalidate(id));
    },
  };
}
