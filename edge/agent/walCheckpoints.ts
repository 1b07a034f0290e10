/**
 * When the agent's SQLite log is copied into its database file. Left to SQLite, the commit
 * that takes the log past 1,000 pages does it, with two more flushes: one payment in 28 or so
 * (a payment writes about 35 pages) waited 2–5 ms more for it, which made the payments' p99.
 * A terminal is idle most of the time, so the agent checkpoints then: every `idleMs` it looks
 * whether anything was written since its last look, and once a whole period went by without a
 * write, copies the log over (a `PASSIVE` checkpoint: it never waits for a transaction). A
 * payment that comes in at that moment waits for a checkpoint of what the last few payments
 * wrote, about a commit's time. Only a long run of back-to-back payments with no idle second
 * (a queue at a kiosk, a benchmark) reaches the backstop: a commit checkpoints once the log
 * holds `backstopPages` pages, one payment in about 285 with the default.
 */
import {
  checkpointWal,
  createBackgroundLoop,
  setWalAutocheckpoint,
  sqliteChangeCount,
  type EdgeStore,
  type WalCheckpointResult,
} from '../../runtime/index.js';
import type { EdgeTimers } from '../timers/timers.js';

/** Period of the look for an idle moment (1 s). */
export const WAL_IDLE_CHECK_MS = 1_000;
/** Log pages at which a commit checkpoints anyway (10,000 pages: 40 MiB of log at most). */
export const WAL_BACKSTOP_PAGES = 10_000;

/** Something the checkpointer did. */
export type WalCheckpointEvent =
  | { type: 'edge.wal.checkpointed'; result: WalCheckpointResult }
  | { type: 'edge.wal.failed'; error: unknown };

/** The idle-time checkpointer of one store. */
export interface WalCheckpoints {
  /** Set the backstop and start looking for idle moments. */
  start(): void;
  /** Stop looking (idempotent). */
  stop(): void;
  /** One look now: checkpoint if nothing was written since the last one (for tests). */
  check(): WalCheckpointResult | undefined;
}

/** What the checkpointer needs. */
export interface WalCheckpointsOptions {
  store: EdgeStore;
  timers: EdgeTimers;
  idleMs?: number;
  backstopPages?: number;
  onEvent?: (event: WalCheckpointEvent) => void;
}

/** Create the checkpointer of `store` (not started). */
export function createWalCheckpoints(options: WalCheckpointsOptions): WalCheckpoints {
  const { store, timers } = options;
  const idleMs = options.idleMs ?? WAL_IDLE_CHECK_MS;
  const backstopPages = options.backstopPages ?? WAL_BACKSTOP_PAGES;
  if (!(idleMs > 0)) throw new RangeError(`idleMs must be positive, got ${idleMs}`);
  if (!Number.isSafeInteger(backstopPages) || backstopPages < 0)
    throw new RangeError(`backstopPages must be an integer ≥ 0, got ${backstopPages}`);
  const onEvent = options.onEvent ?? (() => undefined);
  // the change count at the last look, and the one the log was last checkpointed at
  let seen: number | undefined;
  let checkpointed: number | undefined;

  const check = (): WalCheckpointResult | undefined => {
    const changes = sqliteChangeCount(store);
    const idle = changes === seen;
    seen = changes;
    if (!idle || changes === checkpointed) return undefined;
    const result = checkpointWal(store);
    if (result && !result.busy) checkpointed = changes;
    if (result) onEvent({ type: 'edge.wal.checkpointed', result });
    return result;
  };

  const looks = createBackgroundLoop({
    intervalMs: idleMs,
    timers,
    pass: () => {
      try {
        check();
      } catch (error) {
        onEvent({ type: 'edge.wal.failed', error });
      }
    },
    onError: (error) => onEvent({ type: 'edge.wal.failed', error }),
  });

  return {
    start() {
      if (looks.started) return;
      setWalAutocheckpoint(store, backstopPages);
      looks.start();
    },
    stop() {
      void looks.stop();
    },
    check,
  };
}
