/**
 * The port every queue under test implements, once for the benchmark process (enqueue, count
 * what is left) and once for a worker process (run tasks, report when each body starts). One
 * shape for Saffron and its peers keeps the measurement code identical for all of them, so a
 * difference in the figures is a difference between the queues.
 */

/** Where a queue lives and how a worker process runs it. */
export interface QueueConfig {
  /** PostgreSQL URL (DATABASE_URL). */
  url: string;
  /** The schema this measurement owns (created empty, dropped afterwards). */
  schema: string;
  /** Tasks a worker process runs at once. */
  concurrency: number;
  /** Root of the step modules Saffron's task bodies load from. */
  stepsRoot: string;
}

/** A task queued for a latency sample: the key its worker reports, and when its enqueue committed. */
export interface Enqueued {
  key: string;
  /** {@link wallClock} time at which the enqueuer saw the commit succeed. */
  committedAt: number;
}

/** The benchmark process's side of a queue, over one schema. */
export interface QueueHandle {
  /** Queue `count` tasks as fast as the system allows: the backlog of a throughput run. */
  fill(count: number): Promise<void>;
  /** Queue one task and wait for its commit. */
  enqueue(): Promise<Enqueued>;
  /** Tasks not finished yet (queued or running). */
  unfinished(): Promise<number>;
  /** Tasks that ended in failure (a correct run has none). */
  failed(): Promise<number>;
  /** After a drained backlog: throw if what the tasks had to write is not all there. */
  verify?(): Promise<void>;
  close(): Promise<void>;
}

/** A worker process's side of a queue: connected and ready, not yet taking tasks. */
export interface QueueWorker {
  /** Start taking tasks. */
  go(): Promise<void>;
  /** Stop after in-flight tasks and release every connection. */
  stop(): Promise<void>;
}

/** One system under test. */
export interface QueueSystem {
  /** Name in the results (`saffron`, `pgboss`, …). */
  readonly name: string;
  /** The settings it runs with, for the notes. */
  describe(concurrency: number): string;
  /** Install the system into `config.schema` and open it for enqueueing. */
  open(config: QueueConfig): Promise<QueueHandle>;
  /**
   * Connect a worker; it must call `onStart(key)` as each task body starts, and `onError` with
   * any error its loop reports (a lost connection would otherwise leave tasks claimed and
   * skew the figures silently).
   */
  worker(
    config: QueueConfig,
    onStart: (key: string) => void,
    onError: (error: unknown) => void,
  ): Promise<QueueWorker>;
}

/** The trivial task body every system runs: the queue machinery is what is measured. */
export const taskBody = () => ({ done: true });

/**
 * Wall-clock time in milliseconds with sub-millisecond resolution, comparable between the
 * processes of one machine (each process's high-resolution clock is anchored to the wall
 * clock when it starts).
 */
export const wallClock = (): number => performance.timeOrigin + performance.now();

/** Run `op` `count` times with at most `parallel` calls in flight. */
export async function inParallel(
  count: number,
  parallel: number,
  op: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await op(next++);
    }),
  );
}
