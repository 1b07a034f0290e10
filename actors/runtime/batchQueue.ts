/**
 * The batching pump behind the group-commit queues: items pushed while a batch is being
 * written go together into the next one; an idle queue flushes on the next turn of the event
 * loop, so a lone item waits for nothing; at most `maxInFlight` batches are written at once
 * (SQLite has one writer: 1). What a batch means — and how a failed batch is retried — is the
 * `write` function's business.
 *
 * With `gatherMs`, an item that finds the queue idle (nothing queued, nothing in flight) waits
 * up to that long for company instead: for reads whose callers can afford a moment (a
 * device's handshake is several round trips anyway), so that items arriving a millisecond
 * apart share a statement instead of each sending its own. Items that queue behind a batch
 * in flight have waited already and go as soon as it is done.
 */

/** Options of {@link createBatchQueue}. */
export interface BatchQueueOptions<T> {
  maxBatch: number;
  maxInFlight: number;
  /** How long an item that finds the queue idle waits for others (default 0: the next turn). */
  gatherMs?: number;
  /** Write one batch; must settle every item's own promise, also on failure. */
  write(batch: T[]): Promise<void>;
}

/** Push items; they are written in batches. */
export function createBatchQueue<T>(options: BatchQueueOptions<T>): { push(item: T): void } {
  const queue: T[] = [];
  let inFlight = 0;
  let scheduled = false;

  const pump = () => {
    scheduled = false;
    while (queue.length > 0 && inFlight < options.maxInFlight) {
      const batch = queue.splice(0, options.maxBatch);
      inFlight++;
      void options.write(batch).finally(() => {
        inFlight--;
        schedule();
      });
    }
  };

  const schedule = () => {
    if (scheduled || queue.length === 0 || inFlight >= options.maxInFlight) return;
    scheduled = true;
    setImmediate(pump);
  };

  const gatherMs = options.gatherMs ?? 0;
  const gather = () => {
    scheduled = true;
    setTimeout(pump, gatherMs);
  };

  return {
    push(item) {
      queue.push(item);
      if (gatherMs > 0 && queue.length === 1 && inFlight === 0 && !scheduled) gather();
      else if (gatherMs > 0 && queue.length === options.maxBatch && inFlight < options.maxInFlight)
        setImmediate(pump); // a full batch waits for nobody
      else schedule();
    },
  };
}
