/**
 * Worker processes of the end-to-end measurement. Saffron's are the real CLI — `saffron
 * worker --db URL --steps DIR --concurrency N` through bin/saffron.js, exactly what an
 * operator runs (maintenance included) — ready once it prints that it is serving tasks, and
 * stopped with SIGTERM as an operator would. DBOS's are bench/system/dbosWorker.ts, DBOS
 * launched listening to the task queue. Every process started is tracked until stopped, so a
 * failing or interrupted benchmark kills what is left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from '../gateway/child.js';
import type { DbosConfig } from './dbos.js';
import type { DbosWorkerSpec } from './dbosWorker.js';

/** Worker processes of one measurement. */
export interface WorkerGroup {
  /** Reject if a worker exited on its own. */
  check(): Promise<void>;
  /** Stop every worker (gracefully where the system has a way) and wait for the exits. */
  stop(): Promise<void>;
  /** Kill every worker still running. */
  kill(): void;
}

const LAUNCHER = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));
const DBOS_WORKER = fileURLToPath(new URL('./dbosWorker.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** Characters of a worker's stderr kept for error messages. */
const TAIL = 2000;

interface CliWorker {
  child: ChildProcess;
  exited: Promise<void>;
  tail(): string;
}

function spawnCliWorker(args: string[]): CliWorker {
  const child = spawn(process.execPath, [LAUNCHER, 'worker', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  child.stdout?.resume();
  child.stderr?.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-TAIL)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, tail: () => tail };
}

function whenServing(worker: CliWorker): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => settle(new Error(`saffron worker: not serving within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    const onData = () => {
      if (worker.tail().includes('worker: serving tasks')) settle();
    };
    const onExit = (code: number | null) =>
      settle(new Error(`saffron worker exited (${code}) before serving:\n${worker.tail()}`));
    function settle(error?: Error) {
      clearTimeout(timer);
      worker.child.stderr?.off('data', onData);
      worker.child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    worker.child.stderr?.on('data', onData);
    worker.child.once('exit', onExit);
  });
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** Start `count` `saffron worker` processes on `location` and wait until each serves tasks. */
export async function startSaffronWorkers(
  count: number,
  options: { location: string; stepsRoot: string; concurrency: number },
): Promise<WorkerGroup> {
  const args = [
    '--db',
    options.location,
    '--steps',
    options.stepsRoot,
    '--concurrency',
    String(options.concurrency),
  ];
  const workers = Array.from({ length: count }, () => spawnCliWorker(args));
  let stopping = false;
  let failure: Error | undefined;
  for (const w of workers)
    w.child.once('exit', (code, signal) => {
      if (!stopping)
        failure ??= new Error(`saffron worker exited (${code ?? signal}):\n${w.tail()}`);
    });
  const group: WorkerGroup = {
    check() {
      return failure ? Promise.reject(failure) : Promise.resolve();
    },
    async stop() {
      stopping = true;
      for (const w of workers) if (running(w.child)) w.child.kill('SIGTERM');
      const timer = setTimeout(() => group.kill(), STOP_TIMEOUT_MS);
      await Promise.all(workers.map((w) => w.exited));
      clearTimeout(timer);
    },
    kill() {
      stopping = true;
      for (const w of workers) if (running(w.child)) w.child.kill('SIGKILL');
    },
  };
  try {
    await Promise.all(workers.map(whenServing));
  } catch (error) {
    group.kill();
    throw error;
  }
  return group;
}

/** Start `count` DBOS worker processes and wait until each has launched. */
export async function startDbosWorkers(count: number, config: DbosConfig): Promise<WorkerGroup> {
  const children: Child[] = [];
  const kill = () => children.forEach((c) => c.kill());
  try {
    for (let i = 0; i < count; i++) {
      const spec: DbosWorkerSpec = { config, executorId: `bench-worker-${i + 1}` };
      children.push(await startChild(DBOS_WORKER, spec));
    }
  } catch (error) {
    kill();
    throw error;
  }
  return {
    // a call to a child that exited rejects with its exit
    check: async () => void (await Promise.all(children.map((c) => c.call({ kind: 'ready' })))),
    stop: () => Promise.resolve(kill()),
    kill,
  };
}
