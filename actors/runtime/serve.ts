/**
 * A long-running worker loop: claim and run tasks, and (optionally) run maintenance passes —
 * zombie recovery, PARALLEL timeouts, cron. Idle workers sleep until a NOTIFY says tasks were
 * queued (PostgreSQL) or the poll interval passes (every store). The node registers in
 * worker_nodes (cloud stores) with its capabilities; a timer of its own (not the rounds, which
 * wait for long tasks) refreshes the row's heartbeat every heartbeat interval, renews the
 * leases of the tasks it runs, gives up the claims it lost track of, and aborts the step
 * contexts of the tasks it runs but no longer holds — taken over after their lease ran out,
 * or their step ended without them (store keepTaskClaims). A node whose heartbeat goes stale
 * is declared dead by the maintenance pass and its tasks are taken over (maintenance.ts).
 */
import { hostname } from 'node:os';
import {
  createBackgroundLoop,
  listenForTasks,
  registerWorker,
  keepTaskClaims,
  touchWorker,
} from '../../runtime/index.js';
import type { Internals } from './internals.js';
import { maintain, type MaintenanceOptions, type MaintenanceReport } from './maintenance.js';
import type { Runtime } from './createRuntime.js';
import { drainTasks, type TaskRunOptions } from './tasks.js';

/** Options of {@link serve}. */
export interface ServeOptions extends TaskRunOptions, MaintenanceOptions {
  /** Run tasks (default true). */
  tasks?: boolean;
  /** Run maintenance passes (default true). */
  maintenance?: boolean;
  /** Longest sleep between rounds when idle (default 1000 ms). */
  pollMs?: number;
  /** Time between maintenance passes (default 5000 ms). */
  maintenanceEveryMs?: number;
  /** Called after each round that did something. */
  onRound?: (round: { tasks: number; maintenance?: MaintenanceReport }) => void;
}

/** A running worker loop. */
export interface Service {
  /** Tasks run so far. */
  readonly tasksRun: number;
  /** Stop after the current round and wait for background work; idempotent. */
  stop(): Promise<void>;
}

/** Start the loop. */
export function serve(internals: Internals, runtime: Runtime, options: ServeOptions = {}): Service {
  let running = true;
  let tasksRun = 0;
  let wake: (() => void) | undefined;
  let poked = false; // a wake-up that came while the loop was busy is not lost
  const poke = () => {
    poked = true;
    wake?.();
  };
  const pollMs = options.pollMs ?? 1000;
  const maintenanceEveryMs = options.maintenanceEveryMs ?? 5000;
  const store = internals.store;
  const cloud = store.dialect !== 'sqlite';

  if (options.tasks !== false) internals.taskWake = poke;
  const loop = (async () => {
    let unlisten: (() => Promise<void>) | undefined;
    const driver = store.driver;
    if (driver.dialect === 'postgres' && options.tasks !== false)
      unlisten = await listenForTasks(driver.pool, poke);
    if (cloud) {
      await registerWorker(
        store,
        {
          workerId: internals.workerId,
          hostname: hostname(),
          pid: process.pid,
          concurrency: options.batch ?? 8,
          capabilities: {
            tasks: options.tasks !== false,
            maintenance: options.maintenance !== false,
            regions: options.regions ?? null,
          },
        },
        internals.clock.now(),
      );
    }
    let lastMaintenance = 0;
    const beat = cloud ? heartbeat() : undefined;
    try {
      while (running) {
        poked = false;
        let did = 0;
        let report: MaintenanceReport | undefined;
        try {
          const maintenanceDue =
            options.maintenance !== false ? lastMaintenance + maintenanceEveryMs : undefined;
          if (options.tasks !== false)
            did = await drainTasks(internals, {
              ...options,
              ...(maintenanceDue !== undefined ? { stopAfter: maintenanceDue } : {}),
            });
          tasksRun += did;
          if (options.maintenance !== false && Date.now() - lastMaintenance >= maintenanceEveryMs) {
            lastMaintenance = Date.now();
            report = await maintain(
              internals,
              (type, data, o) => runtime.start(type, data, o),
              options,
            );
          }
        } catch (error) {
          // a failed round (database restart, lost connection) is reported and retried
          internals.onError(error, internals.workerId);
          did = 0;
        }
        if (
          did > 0 ||
          (report && report.recovered + report.released + report.timeouts + report.scheduled > 0)
        )
          options.onRound?.({ tasks: did, ...(report ? { maintenance: report } : {}) });
        if (did > 0 || !running) continue;
        if (poked) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } finally {
      if (internals.taskWake === poke) internals.taskWake = undefined;
      await runtime.drain();
      await beat?.stop();
      await unlisten?.();
      if (cloud) await touchWorker(store, internals.workerId, internals.clock.now(), 'STOPPED');
    }
  })();
  loop.catch((error: unknown) => internals.onError(error, internals.workerId));

  /** The node's heartbeat: worker_nodes row and task leases, on its own timer. */
  function heartbeat(): { stop(): Promise<void> } {
    const leaseMs = options.leaseMs ?? internals.taskLeaseMs;
    // a claim answered within this long is not mistaken for one whose answer was lost
    const orphanAfterMs = Math.max(30_000, internals.heartbeatIntervalMs * 3);
    const touch = async () => {
      const now = internals.clock.now();
      await touchWorker(store, internals.workerId, now);
      const { lost } = await keepTaskClaims(store, {
        workerId: internals.workerId,
        running: [...internals.heldTasks.keys()],
        until: new Date(now.getTime() + leaseMs),
        orphanedBefore: new Date(now.getTime() - orphanAfterMs),
        now,
      });
      for (const id of lost) internals.heldTasks.get(id)?.lost();
    };
    // a beat still waiting for the database is not doubled
    const beats = createBackgroundLoop({
      intervalMs: internals.heartbeatIntervalMs,
      pass: touch,
      onError: (error) => internals.onError(error, internals.workerId),
    });
    beats.start();
    return { stop: () => beats.stop() };
  }

  return {
    get tasksRun() {
      return tasksRun;
    },
    async stop() {
      running = false;
      poke();
      await loop.catch(() => undefined);
    },
  };
}
