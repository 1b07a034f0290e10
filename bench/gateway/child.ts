/**
 * Child processes of the gateway benchmark, driven by request/reply calls over the IPC
 * channel. The gateway under test and the clients that load it run in separate processes so
 * that one process's file-descriptor limit (about 20,000 here) is spent on the sockets being
 * measured, and so that the server's resident memory is its own. A child exits when its
 * parent disconnects, so a benchmark that dies leaves nothing behind.
 *
 * With `BENCH_CPU_PROF_DIR` set, every child writes a V8 CPU profile there (`--cpu-prof`);
 * it is then stopped by disconnecting, so it exits on its own and the profile is written.
 * `BENCH_CHILD_ARGS` adds Node options to every child (space-separated, e.g. `--trace-gc`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { cpuProfileArgs, cpuProfileDir, PROFILE_EXIT_MS } from '../harness.js';

/** A call to a child: a `kind` and its arguments. */
export interface Call {
  kind: string;
  [key: string]: unknown;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** A running child process. */
export interface Child {
  readonly pid: number;
  /** What the child reported when it became ready. */
  readonly ready: Record<string, unknown>;
  /** Call the child and wait for its answer. */
  call<T>(call: Call, timeoutMs?: number): Promise<T>;
  /** Kill it (idempotent). */
  kill(): void;
}

const READY_TIMEOUT_MS = 120_000;

/**
 * Fork `entry` (run through tsx, with `--expose-gc` so it can be measured after a full
 * collection) with `spec` as its only argument, and wait for it to be ready.
 */
export async function startChild(entry: string, spec: unknown): Promise<Child> {
  const profileDir = cpuProfileDir();
  const child: ChildProcess = fork(entry, [JSON.stringify(spec)], {
    execArgv: [
      '--expose-gc',
      '--import',
      import.meta.resolve('tsx'),
      ...cpuProfileArgs(),
      ...(process.env.BENCH_CHILD_ARGS ?? '').split(' ').filter(Boolean),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let exited: Error | undefined;
  const failAll = (error: Error) => {
    exited = error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  child.on('exit', (code, signal) =>
    failAll(new Error(`${entry} (pid ${child.pid}) exited (${code ?? signal})`)),
  );
  child.on('message', (m: Reply) => {
    const waiting = pending.get(m.id);
    if (!waiting) return;
    pending.delete(m.id);
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(new Error(`${entry} (pid ${child.pid}): ${m.error}`));
  });
  const call = <T>(c: Call, timeoutMs = 600_000): Promise<T> => {
    if (exited) return Promise.reject(exited);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(
          new Error(`${entry} (pid ${child.pid}): no answer to '${c.kind}' in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ ...c, id });
    });
  };
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (profileDir && child.connected) {
      child.disconnect();
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }, PROFILE_EXIT_MS).unref();
    } else child.kill('SIGKILL');
  };
  try {
    const ready = await call<Record<string, unknown>>({ kind: 'ready' }, READY_TIMEOUT_MS);
    return { pid: child.pid!, ready, call, kill };
  } catch (error) {
    kill();
    throw error;
  }
}

/**
 * The child's side: answer calls with `handlers` (by `kind`); `ready` answers once `setup`
 * has finished. The process exits when the parent disconnects.
 */
export function serveParent(
  setup: Promise<Record<string, unknown>>,
  handlers: Record<string, (call: Call) => Promise<unknown>>,
): void {
  process.on('disconnect', () => process.exit(0));
  setup.catch(() => undefined); // reported by the `ready` call, not as an unhandled rejection
  process.on('message', (m: Call & { id: number }) => {
    const handler = m.kind === 'ready' ? () => setup : handlers[m.kind];
    const answer = (reply: Reply) => process.send?.(reply);
    if (!handler) {
      answer({ id: m.id, ok: false, error: `unknown call '${m.kind}'` });
      return;
    }
    handler(m).then(
      (value) => answer({ id: m.id, ok: true, value }),
      (error: unknown) =>
        answer({
          id: m.id,
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
    );
  });
}

/** This process's memory after two full collections (needs `--expose-gc`). */
export async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 2; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return process.memoryUsage();
}
