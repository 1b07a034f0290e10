/**
 * Admission of device socket handshakes. A gateway carries at most `limit` handshakes at
 * once; an upgrade beyond that is refused (503) with a `Retry-After` that says when to come
 * back. After a mass disconnect the whole fleet arrives within a second: refusing them all
 * with the same short delay makes them all come back together again, and a random 1–5 s
 * spreads them over less time than the gateway needs to take them in. Instead the gateway
 * keeps a calendar of the devices it has told to come back in each coming second and fills
 * each second only up to the rate at which it has been completing handshakes (and never
 * below half its best second: {@link PEAK_SHARE}), so the refused return just as fast as they
 * can be served, in order of refusal. The device adds up to a second at random within its
 * second (edge/commands/socketLink.ts).
 */

/** Handshake slots and the `Retry-After` of the refused. */
export interface Admission {
  /**
   * Take a slot; undefined when `limit` handshakes are in progress. The release is
   * idempotent; a slot never released (an upgrade abandoned half-way) frees itself after
   * `abandonAfterMs`.
   */
  admit(): (() => void) | undefined;
  /** Seconds a refused device should wait: the first coming second with room left. */
  retryAfterSeconds(): number;
  /** Handshakes in progress. */
  readonly pending: number;
}

/**
 * Least the capacity estimate falls to, as a share of the most handshakes the gateway has
 * completed in one second. In a storm, a second in which the gateway was full can complete
 * few handshakes for reasons that pass within it: the old sessions' closes, a collection,
 * devices slow to answer their challenge. An estimate that followed a few such seconds down
 * told the fleet to come back over most of a minute while the gateway sat idle (10,000
 * devices in `bench system --parts storm`, whose clients then stalled for seconds in
 * `connect()` while some of their devices held handshake slots: back in 17–45 s in 8 runs,
 * against 4.5–14.5 s with this floor in 8 runs alternating with them, 2026-11-30). A rate the
 * gateway has shown is a better guess than its worst second; a guess too high costs a refused
 * device one more attempt, with no database work.
 */
const PEAK_SHARE = 0.5;

/** Longest `Retry-After` given (seconds). */
export const MAX_RETRY_AFTER_S = 60;

/** Options of {@link createAdmission}. */
export interface AdmissionOptions {
  /** Handshakes carried at once. */
  limit: number;
  /** The clock (ms). */
  now: () => number;
  /** When a slot taken and never released frees itself (30 s). */
  abandonAfterMs?: number;
}

/** Admission for one gateway. */
export function createAdmission(options: AdmissionOptions): Admission {
  const { limit, now, abandonAfterMs = 30_000 } = options;
  let pending = 0;
  // the gateway's capacity in handshakes per second: what it completed in seconds when it
  // had to refuse (it was full); a quieter second only shows demand, which can raise the
  // estimate but not lower it; until one is measured, the limit per second is assumed; never
  // below PEAK_SHARE of the best second
  let capacity = limit;
  let second = Math.floor(now() / 1000);
  let releasedThisSecond = 0;
  let refusedThisSecond = 0;
  const promised = new Map<number, number>(); // epoch second → devices told to return then
  let peak = 0; // the most handshakes completed in one second so far

  const roll = (current: number) => {
    if (current === second) return;
    peak = Math.max(peak, releasedThisSecond);
    capacity = Math.max(
      PEAK_SHARE * peak,
      refusedThisSecond > 0
        ? 0.5 * capacity + 0.5 * releasedThisSecond
        : Math.max(capacity, releasedThisSecond),
    );
    second = current;
    releasedThisSecond = refusedThisSecond = 0;
    for (const s of promised.keys()) if (s <= current) promised.delete(s);
  };

  return {
    admit() {
      if (pending >= limit) {
        roll(Math.floor(now() / 1000));
        refusedThisSecond++;
        return undefined;
      }
      pending++;
      let timer: NodeJS.Timeout | undefined = setTimeout(() => release(), abandonAfterMs);
      timer.unref();
      const release = () => {
        if (timer === undefined) return;
        clearTimeout(timer);
        timer = undefined;
        pending--;
        roll(Math.floor(now() / 1000));
        releasedThisSecond++;
      };
      return release;
    },
    retryAfterSeconds() {
      const current = Math.floor(now() / 1000);
      roll(current);
      const perSecond = Math.max(1, Math.round(capacity));
      for (let s = 1; s < MAX_RETRY_AFTER_S; s++) {
        const told = promised.get(current + s) ?? 0;
        if (told < perSecond) {
          promised.set(current + s, told + 1);
          return s;
        }
      }
      return MAX_RETRY_AFTER_S;
    },
    get pending() {
      return pending;
    },
  };
}
