/**
 * A supervised child process of the chaos run (gateway, worker, agent host): started as a
 * real `node` process, considered up once it prints its ready line, SIGKILLed and restarted
 * by the fault schedule, and restarted after an exit nobody asked for — which is recorded,
 * because a process that dies on its own (say, when PostgreSQL restarts under it) is a
 * finding of the run, not noise to hide. Its stderr and stdout go to a log file; stdout
 * lines are also handed to `onLine` (the agent hosts report over stdout).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** An exit the run did not cause. */
export interface UnplannedExit {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  at: string;
}

/** How a managed process is started. */
export interface ManagedProcessOptions {
  name: string;
  /** Arguments of `node` (script and its arguments). */
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Log file of the process (appended across restarts). */
  logFile: string;
  /** Whether a stdout or stderr line says the process is up. */
  isReady: (line: string) => boolean;
  /** Longest wait for the ready line. */
  readyTimeoutMs?: number;
  /** Every stdout line (after the log). */
  onLine?: (line: string) => void;
  /** Told about each unplanned exit (the process is restarted right after). */
  onUnplannedExit?: (exit: UnplannedExit) => void;
}

/** A supervised child process. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILLs the schedule sent. */
  readonly kills: number;
  /** Starts, the first one included. */
  readonly starts: number;
  /** Spawn and wait for the ready line. */
  start(): Promise<void>;
  /** SIGKILL and wait for the exit (no restart). */
  kill(): Promise<void>;
  /** SIGTERM, wait up to `graceMs` (then SIGKILL) for the exit. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** Write a line to the process's stdin. */
  send(line: string): void;
}

/** Create (not start) a managed process. */
export function managedProcess(options: ManagedProcessOptions): ManagedProcess {
  let child: ChildProcess | undefined;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  let expectingExit = false;
  let closed = false;
  let kills = 0;
  let starts = 0;
  const log: WriteStream = createWriteStream(options.logFile, { flags: 'a' });
  // a line that arrives after the log closed is dropped, not a crash of the run
  log.on('error', () => undefined);
  const stamp = (text: string) =>
    log.write(`--- ${new Date().toISOString()} ${options.name}: ${text}\n`);

  const spawnOnce = (): Promise<void> => {
    starts++;
    stamp(`start #${starts}`);
    const proc = spawn(process.execPath, options.args, {
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = proc;
    expectingExit = false;
    proc.stdin.on('error', () => undefined);
    let ready!: () => void;
    let notReady!: (error: Error) => void;
    const readyPromise = new Promise<void>((resolve, reject) => {
      ready = resolve;
      notReady = reject;
    });
    let isUp = false;
    const check = (line: string) => {
      if (!isUp && options.isReady(line)) {
        isUp = true;
        ready();
      }
    };
    createInterface({ input: proc.stdout }).on('line', (line) => {
      log.write(`${line}\n`);
      check(line);
      options.onLine?.(line);
    });
    createInterface({ input: proc.stderr }).on('line', (line) => {
      log.write(`${line}\n`);
      check(line);
    });
    exited = new Promise((resolve) => {
      proc.on('exit', (code, signal) => {
        stamp(`exit code ${code} signal ${signal}`);
        if (!isUp) notReady(new Error(`${options.name} exited (${code ?? signal}) before ready`));
        if (child === proc) child = undefined;
        if (!expectingExit && !closed) {
          const exit = { name: options.name, code, signal, at: new Date().toISOString() };
          options.onUnplannedExit?.(exit);
          setTimeout(() => {
            if (!closed && !child) void spawnOnce().catch(() => undefined);
          }, 1_000);
        }
        resolve({ code, signal });
      });
    });
    const timeoutMs = options.readyTimeoutMs ?? 120_000;
    const timer = setTimeout(
      () => notReady(new Error(`${options.name} not ready after ${timeoutMs} ms`)),
      timeoutMs,
    );
    return readyPromise.finally(() => clearTimeout(timer));
  };

  return {
    name: options.name,
    get pid() {
      return child?.pid;
    },
    get running() {
      return child !== undefined;
    },
    get kills() {
      return kills;
    },
    get starts() {
      return starts;
    },
    start() {
      closed = false;
      return spawnOnce();
    },
    async kill() {
      const proc = child;
      if (!proc) return;
      expectingExit = true;
      kills++;
      stamp('SIGKILL (fault schedule)');
      proc.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 30_000) {
      closed = true;
      const proc = child;
      if (!proc) {
        await new Promise<void>((resolve) => log.end(resolve));
        return null;
      }
      expectingExit = true;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const { code } = await exited!;
      clearTimeout(timer);
      await new Promise<void>((resolve) => log.end(resolve));
      return code;
    },
    send(line) {
      child?.stdin?.write(`${line}\n`);
    },
  };
}
