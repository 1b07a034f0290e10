/**
 * Samples of the fleet gauges (devices online, SAF backlog) kept in memory: a ring of fixed
 * size, so the memory a gateway spends on them never grows. With the default 10 s interval
 * and 360 slots it holds the last hour. A gauge has no history in the database — it is what
 * the fleet looks like at the moment it is read — so these samples are the only record of
 * its past, and a gateway that just started has none before its first sample.
 */

/** One reading of the fleet gauges. */
export interface GaugeSample {
  /** When it was read (epoch milliseconds). */
  at: number;
  /** Devices whose status is ONLINE or SYNCING. */
  devicesOnline: number;
  /** Sum of the store-and-forward records devices last reported as not yet uploaded. */
  safBacklog: number;
}

/** A bounded ring of samples, oldest first. */
export interface GaugeRing {
  add(sample: GaugeSample): void;
  /** The samples kept, oldest first. */
  samples(): GaugeSample[];
}

/** An empty ring of `capacity` samples. */
export function createGaugeRing(capacity: number): GaugeRing {
  if (!Number.isInteger(capacity) || capacity <= 0)
    throw new RangeError('capacity must be a positive integer');
  const slots: GaugeSample[] = [];
  let next = 0;
  return {
    add(sample) {
      if (slots.length < capacity) slots.push(sample);
      else slots[next] = sample;
      next = (next + 1) % capacity;
    },
    samples() {
      return slots.length < capacity ? [...slots] : [...slots.slice(next), ...slots.slice(0, next)];
    },
  };
}
