/**
 * Device credentials held in memory, so that authenticating a device's request needs no
 * database read: per device, its current secret and the previous one with the end of its
 * grace period, opened once (the store keeps them sealed).
 *
 * Only acceptance is answered from memory. A request the cached secrets refuse — a wrong
 * signature, a secret rotated on another gateway a moment ago, an unknown device — is
 * checked again on a fresh read, so a refusal costs one read whether the device exists or
 * not (timing does not tell), and unknown devices are not kept (random ids cannot push real
 * devices out).
 *
 * Entries are dropped by the change bus when a device is registered, rotated, changed or
 * deleted (on any gateway), and every entry expires `ttlMs` after the read that filled it
 * began. Nothing is kept or served while the gateway cannot vouch that it hears changes in
 * time (`trusted`: LISTEN holds and its own announcements come back within the liveness
 * interval). So a rotated or deleted device's old secret is accepted here at most for the
 * notification's delay after the commit — about the liveness interval (2 s) if the
 * notification connection lags or dies silently — and never longer than `ttlMs`.
 */
import { createBatchQueue } from '../../actors/index.js';
import { type CacheChange, type CloudStore, toError } from '../../runtime/index.js';
import {
  getDevicesCredentials,
  type SealedDeviceCredentials,
} from '../devices/store/devices/getDeviceCredentials.js';
import {
  CACHE_DEFAULTS,
  createInvalidatingCache,
  type CacheBounds,
} from '../cache/invalidatingCache.js';
import type { Keyring } from '../keys.js';

/**
 * How long a credential read waits for others to share its statement. A handshake is three
 * round trips already; a cold gateway under a connecting fleet sends a few times fewer reads.
 */
const READ_GATHER_MS = 2;

/** The credentials of devices, read through. */
export interface CredentialCache {
  /** The secrets `deviceId` may sign with at `nowMs`: none when the device is unknown. */
  secrets(deviceId: string, nowMs: number): Promise<string[]>;
  /**
   * Whether `check` accepts the secrets of `deviceId` at `nowMs`. Secrets held in memory that
   * `check` refuses are read again first, so only acceptance is answered from memory: a
   * refusal costs one read whether or not the device exists.
   */
  verify(deviceId: string, nowMs: number, check: (secrets: string[]) => boolean): Promise<boolean>;
  /**
   * Read into memory the credentials of those of `deviceIds` it does not hold, as their own
   * requests would (reads that arrive together share a statement); resolves to how many of
   * them were read and exist.
   */
  warm(deviceIds: readonly string[]): Promise<number>;
  /** Drop what `change` names; everything when undefined. */
  apply(change: CacheChange | undefined): void;
}

interface Opened {
  secret: string | null;
  previous: string | null;
  previousExpiresMs: number;
}

/** Who is told what each read found besides the secrets. */
export interface CredentialReadObserver {
  /** A read of `deviceIds` is about to start; returns its number. */
  reading(deviceIds: readonly string[]): number;
  /** Whether `deviceId` had no open command, as read `read` found it. */
  read(deviceId: string, read: number, quiet: boolean): void;
}

/**
 * A credential cache over `store`, keeping entries while `trusted()`; `observer` hears
 * whether each device read had open commands (link/quietDevices.ts).
 */
export function createCredentialCache(
  store: CloudStore,
  keys: Keyring,
  trusted: () => boolean,
  bounds: CacheBounds = {},
  observer?: CredentialReadObserver,
): CredentialCache {
  const cache = createInvalidatingCache<Opened>({
    maxEntries: bounds.maxEntries ?? CACHE_DEFAULTS.maxEntries,
    ttlMs: bounds.ttlMs ?? CACHE_DEFAULTS.ttlMs,
    trusted,
  });
  // reads of devices not in memory that arrive together (a gateway started cold under a
  // reconnecting fleet) are one statement: one read at a time, and a read that finds none
  // in flight waits READ_GATHER_MS for others (devices connecting a millisecond apart)
  const reads = createBatchQueue<{
    deviceId: string;
    done: (found: SealedDeviceCredentials | undefined, error?: Error) => void;
  }>({
    maxBatch: 500,
    maxInFlight: 1,
    gatherMs: store.driver.dialect === 'postgres' ? READ_GATHER_MS : 0,
    async write(batch) {
      try {
        const deviceIds = batch.map((r) => r.deviceId);
        const read = observer?.reading(deviceIds);
        const found = await getDevicesCredentials(store, deviceIds);
        if (observer && read !== undefined)
          for (const [deviceId, sealed] of found)
            observer.read(deviceId, read, !sealed.openCommands);
        for (const r of batch) r.done(found.get(r.deviceId));
      } catch (error) {
        for (const r of batch) r.done(undefined, toError(error));
      }
    },
  });
  const readSealed = (deviceId: string) =>
    new Promise<SealedDeviceCredentials | undefined>((resolve, reject) =>
      reads.push({
        deviceId,
        done: (found, error) => (error === undefined ? resolve(found) : reject(error)),
      }),
    );
  const read = async (deviceId: string): Promise<Opened | null> => {
    const sealed = await readSealed(deviceId);
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
  const readThrough = (deviceId: string) =>
    cache.fill(
      deviceId,
      () => read(deviceId),
      (opened) => opened ?? undefined, // an unknown device is not kept
    );
  const usable = (found: Opened | null, nowMs: number): string[] => {
    const secrets: string[] = [];
    if (found?.secret) secrets.push(found.secret);
    if (found?.previous && found.previousExpiresMs > nowMs) secrets.push(found.previous);
    return secrets;
  };
  return {
    async secrets(deviceId, nowMs) {
      return usable(cache.get(deviceId) ?? (await readThrough(deviceId)), nowMs);
    },
    async verify(deviceId, nowMs, check) {
      const found = cache.get(deviceId);
      if (found === undefined) return check(usable(await readThrough(deviceId), nowMs));
      if (check(usable(found, nowMs))) return true;
      // refused from memory: read again, so a secret rotated (or a device registered) on
      // another gateway is taken before its notification arrives
      return check(usable(await readThrough(deviceId), nowMs));
    },
    async warm(deviceIds) {
      const cold = deviceIds.filter((deviceId) => cache.get(deviceId) === undefined);
      const read = await Promise.all(cold.map(readThrough));
      return read.filter((opened) => opened !== null).length;
    },
    apply(change) {
      if (change === undefined) cache.clear();
      else if (change.kind === 'devices') change.deviceIds.forEach((id) => cache.invalidate(id));
    },
  };
}
