/**
 * The credentials of the devices most recently seen, read into memory when a gateway starts.
 *
 * A gateway starts cold most often under the fleet it was holding a moment before (a deploy,
 * a restart, a crash): every device reconnects at once, and each handshake would wait for
 * its device's credential read. Read ahead instead, a slice of devices at a time through the
 * credential cache (credentialCache.ts), beside the reads of the devices already connecting:
 * the handshakes that arrive after their device's slice run no statement, and the slices'
 * reads also tell which devices have no command to resume (link/quietDevices.ts).
 *
 * The reads are the cache's own, with its guarantees: nothing is kept while the gateway
 * cannot vouch that it hears changes, so the reading starts once it can (or not at all,
 * after `TRUST_WAIT_MS`), and a device changed while its slice is read is not kept.
 */
import { listRecentDeviceIds } from '../devices/store/devices/listRecentDeviceIds.js';
import type { CloudStore } from '../../runtime/index.js';
import type { CredentialCache } from './credentialCache.js';

/** Devices read together: one statement of the credential cache's reads. */
const SLICE = 500;
/** Longest wait, after the start, for the gateway to hear its changes before it reads. */
const TRUST_WAIT_MS = 10_000;
/** How often it looks whether the gateway hears its changes yet. */
const TRUST_POLL_MS = 20;

/** Where the outcome is told. */
export interface WarmLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Options of {@link warmCredentials}. */
export interface WarmCredentialsOptions {
  store: CloudStore;
  credentials: CredentialCache;
  /** Whether the caches keep what they read now. */
  trusted: () => boolean;
  /** Most devices read. */
  limit: number;
  log: WarmLog;
}

/** The reading ahead, under way. */
export interface Warming {
  /** How many devices' credentials were read; 0 when it did not run or failed (logged). */
  readonly done: Promise<number>;
  /** Stop after the slice in flight. */
  stop(): void;
}

/** Start reading ahead the credentials of up to `limit` devices, the most recently seen first. */
export function warmCredentials(options: WarmCredentialsOptions): Warming {
  let stopped = false;
  const run = async (): Promise<number> => {
    const startedMs = performance.now();
    while (!options.trusted()) {
      if (stopped) return 0;
      if (performance.now() - startedMs > TRUST_WAIT_MS) {
        options.log.warn(
          { waited_ms: TRUST_WAIT_MS },
          'device credentials not read ahead: the gateway does not hear its change notifications yet',
        );
        return 0;
      }
      await new Promise((resolve) => setTimeout(resolve, TRUST_POLL_MS));
    }
    const deviceIds = await listRecentDeviceIds(options.store, options.limit);
    let read = 0;
    for (let i = 0; i < deviceIds.length && !stopped; i += SLICE)
      read += await options.credentials.warm(deviceIds.slice(i, i + SLICE));
    options.log.info(
      { devices: read, ms: Math.round(performance.now() - startedMs) },
      'device credentials read ahead into memory',
    );
    return read;
  };
  const done = options.limit > 0 ? run() : Promise.resolve(0);
  return {
    done: done.catch((error: unknown) => {
      options.log.warn({ err: error }, 'reading device credentials ahead failed');
      return 0;
    }),
    stop: () => void (stopped = true),
  };
}
