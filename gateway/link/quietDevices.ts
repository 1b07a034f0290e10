/**
 * Devices known to have nothing to resume, so that their hello needs no statement.
 *
 * Two things tell. The credential read of a device that connects cold (credentialCache.ts,
 * on the upgrade) also says whether it has a PENDING or DELIVERED command. And a session of
 * this gateway that ends knows it (session.ts): its resume was done, no delivery was running
 * or wanted, and every command it pushed was acked on it. Either is a read here: it begins
 * ({@link QuietDevices.reading}; a session's as its socket ends) and ends with what it found
 * ({@link QuietDevices.read}; a session's once its last work is done). When it found nothing,
 * and nothing since it began may have made a command deliverable, the next hello's resume
 * (redelivery, then delivery) would find nothing: the session skips it and is idle at once.
 *
 * "Nothing since it began": every path that makes a command deliverable wakes its device here
 * or NOTIFYs the gateways (hub.ts), after its commit; the hub reports each wake and each
 * notification as {@link QuietDevices.touched}, which spoils the device's entry. So do a
 * command created DELIVERED for a session that has ended and a session on another gateway that
 * ends with commands it pushed unacked (it NOTIFYs). A commit before a read's snapshot is in
 * what the read saw; one after it is touched after the read began. Lost notifications (the
 * LISTEN connection dropped) spoil every entry, and nothing is taken while the gateway cannot
 * vouch that it hears changes in time (`trusted`).
 *
 * Entries are bounded in number (the oldest go first) and taken at most once; one older
 * than `maxAgeMs` counts for nothing. A wrong "nothing to resume" is never a lost command:
 * a DELIVERED command left unacked is retried after the ack timeout all the same.
 */

/** What the gateway knows of devices connecting. */
export interface QuietDevices {
  /**
   * A read of `deviceIds` is about to start (or a session of one is ending); returns its
   * number, for {@link read}.
   */
  reading(deviceIds: readonly string[]): number;
  /** What read `read` found: whether `deviceId` had no PENDING or DELIVERED command. */
  read(deviceId: string, read: number, quiet: boolean): void;
  /** A command of `deviceId` may have become deliverable. */
  touched(deviceId: string): void;
  /** Notifications may have been lost: spoil every entry. */
  forget(): void;
  /**
   * Whether `deviceId` had nothing to resume when last read, and nothing may have changed
   * that since; the entry is used up.
   */
  take(deviceId: string): boolean;
}

interface Entry {
  read: number;
  state: 'reading' | 'quiet' | 'spoiled';
  atMs: number;
}

/** Bounds of {@link createQuietDevices}. */
export interface QuietDeviceBounds {
  /** Most entries held (default 20,000); the oldest go first. */
  maxEntries?: number;
  /** Age after which an entry counts for nothing (default 60 s). */
  maxAgeMs?: number;
}

/** Quiet devices of one gateway, taken only while `trusted()`. */
export function createQuietDevices(
  trusted: () => boolean,
  now: () => number,
  bounds: QuietDeviceBounds = {},
): QuietDevices {
  const maxEntries = bounds.maxEntries ?? 20_000;
  const maxAgeMs = bounds.maxAgeMs ?? 60_000;
  const entries = new Map<string, Entry>();
  let reads = 0;
  return {
    reading(deviceIds) {
      const read = ++reads;
      const atMs = now();
      for (const deviceId of deviceIds) {
        entries.delete(deviceId); // re-inserted last: the oldest stay first
        entries.set(deviceId, { read, state: 'reading', atMs });
      }
      for (const deviceId of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(deviceId);
      }
      return read;
    },
    read(deviceId, read, quiet) {
      const entry = entries.get(deviceId);
      if (entry?.read !== read || entry.state !== 'reading') return;
      if (quiet) entry.state = 'quiet';
      else entries.delete(deviceId);
    },
    touched(deviceId) {
      const entry = entries.get(deviceId);
      if (entry) entry.state = 'spoiled';
    },
    forget() {
      for (const entry of entries.values()) entry.state = 'spoiled';
    },
    take(deviceId) {
      const entry = entries.get(deviceId);
      if (!entry) return false;
      entries.delete(deviceId);
      return entry.state === 'quiet' && now() - entry.atMs <= maxAgeMs && trusted();
    },
  };
}
