/**
 * The batching pump behind the group-commit queues: items pushed while a batch is being
 * written go together into the next one; an idle queue flushes on the next turn of the event
 * loop, so a lone item waits for nothing; at most `maxInFlight` batches are written at once
 * (SQLite has one writer: 1). What a batch means — and how a failed batch is retried — is the
 * `write` function's business.
 */

/** Options of {@link createBatchQueue}. */
export interface BatchQueueOptions<T> {
  maxBatch: number;
  maxInFlight: number;
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

  return {
    push(item) {
      queue.push(item);
      schedule();
    },
  };
}
