/**
 * Worker processes for the queue benchmark: real child processes
 * (`node --import tsx bench/queue/worker.ts SPEC`) driven over the IPC channel. Each one
 * connects, says `ready`, takes tasks only after `go` — so a throughput run starts with every
 * process connected and the whole backlog queued — and on `stop` finishes its in-flight
 * tasks and reports when each task body started. With `BENCH_CPU_PROF_DIR` set, every worker
 * process writes a V8 CPU profile there (`--cpu-prof`) when it exits after `stop`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuProfileArgs, cpuProfileDir, PROFILE_EXIT_MS } from '../harness.js';
import type { QueueConfig } from './system.js';

/** What a worker process is started with (its only argument, as JSON). */
export interface WorkerSpec {
  system: string;
  config: QueueConfig;
}

/** Messages to a worker process. */
export type ToWorker = { kind: 'go' } | { kind: 'stop' };

/** Messages from a worker process; `starts` holds [task key, wall-clock ms] pairs. */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'stopped'; starts: [string, number][] }
  | { kind: 'failed'; error: string };

/** Worker processes of one measurement. */
export interface Fleet {
  /** The worker processes' pids. */
  pids: number[];
  /** Let every process start taking tasks. */
  go(): void;
  /** Throw if a process failed or exited on its own. */
  check(): void;
  /** Stop every process after its in-flight tasks; returns when each task body started, by key. */
  stop(): Promise<Map<string, number>>;
  /** Kill every process still running (cleanup after a failure or a signal). */
  kill(): void;
}

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 60_000;

/** Resolve when `child` has exited, or after `ms`. */
const exited = (child: ChildProcess, ms: number) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(resolve, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Wait for a message of `kind` from `child`; a `failed` message, an exit or the timeout reject. */
function message<K extends FromWorker['kind']>(
  child: ChildProcess,
  kind: K,
  timeoutMs: number,
): Promise<Extract<FromWorker, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      if (m.kind === kind) settle(undefined, m as Extract<FromWorker, { kind: K }>);
      else if (m.kind === 'failed') settle(new Error(`worker ${child.pid}: ${m.error}`));
    };
    const onExit = (code: number | null, signal: string | null) =>
      settle(new Error(`worker ${child.pid} exited (${code ?? signal}) before '${kind}'`));
    const timer = setTimeout(
      () => settle(new Error(`worker ${child.pid}: no '${kind}' within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function settle(error?: Error, m?: Extract<FromWorker, { kind: K }>) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(m!);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/**
 * Start `processes` worker processes of `system` and wait until all are ready. The fleet is
 * in `live` until it is stopped or killed, so a signal handler can kill what is running.
 */
export async function startFleet(
  system: string,
  config: QueueConfig,
  processes: number,
  live: Set<Fleet>,
): Promise<Fleet> {
  const spec: WorkerSpec = { system, config };
  const children = Array.from({ length: processes }, () =>
    fork(WORKER, [JSON.stringify(spec)], {
      execArgv: ['--import', import.meta.resolve('tsx'), ...cpuProfileArgs()],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  let failure: Error | undefined;
  let stopping = false;
  for (const child of children) {
    child.on('message', (m: FromWorker) => {
      if (m.kind === 'failed') failure ??= new Error(`worker ${child.pid}: ${m.error}`);
    });
    child.on('exit', (code, signal) => {
      if (!stopping) failure ??= new Error(`worker ${child.pid} exited (${code ?? signal})`);
    });
  }
  const send = (m: ToWorker) => children.forEach((c) => c.send(m));
  const fleet: Fleet = {
    pids: children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
    go: () => send({ kind: 'go' }),
    check() {
      if (failure) throw failure;
    },
    async stop() {
      stopping = true;
      const stopped = children.map((c) => message(c, 'stopped', STOP_TIMEOUT_MS));
      send({ kind: 'stop' });
      try {
        const starts = new Map<string, number>();
        for (const m of await Promise.all(stopped)) for (const [k, t] of m.starts) starts.set(k, t);
        // each process exits once it has reported; a profiled one writes its profile first
        if (cpuProfileDir()) await Promise.all(children.map((c) => exited(c, PROFILE_EXIT_MS)));
        return starts;
      } finally {
        fleet.kill();
      }
    },
    kill() {
      stopping = true;
      live.delete(fleet);
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    },
  };
  live.add(fleet);
  try {
    await Promise.all(children.map((c) => message(c, 'ready', READY_TIMEOUT_MS)));
  } catch (error) {
    fleet.kill();
    throw error;
  }
  return fleet;
}
