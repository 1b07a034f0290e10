/**
 * A supervised child process of the chaos run (gateway, worker, agent host): started as a
 * real `node` process, considered up once it prints its ready line, SIGKILLed and restarted
 * by the fault schedule, and restarted after an exit nobody asked for — which is recorded,
 * because a running process that dies on its own (say, when PostgreSQL restarts under it)
 * is a finding of the run, not noise to hide. A start that exits before its ready line (its
 * database is down right then) is tried again, as a supervisor would, and only counted.
 * Stderr and stdout go to a log file; stdout lines are also handed to `onLine` (the agent
 * hosts report over stdout).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** A start that ended before the ready line. */
class EarlyExit extends Error {
  override readonly name = 'EarlyExit';
}

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
  /** Starts that exited before their ready line (and were tried again). */
  readonly failedStarts: number;
  /**
   * Spawn and wait for the ready line, spawning again after an exit before it; a call while
   * a start is in progress joins it.
   */
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
  let failedStarts = 0;
  /** The start in progress: a second `start()` (or a crash restart) joins it. */
  let starting: Promise<void> | undefined;
  const log: WriteStream = createWriteStream(options.logFile, { flags: 'a' });
  // a line that arrives after the log closed is dropped, not a crash of the run
  log.on('error', () => undefined);
  const stamp = (text: string) =>
    log.write(`--- ${new Date().toISOString()} ${options.name}: ${text}\n`);

  /** Spawn once; resolves when ready, rejects with `exitedEarly` set if it exited before. */
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
        if (child === proc) child = undefined;
        if (!isUp)
          notReady(new EarlyExit(`${options.name} exited (${code ?? signal}) before ready`));
        else if (!expectingExit && !closed) {
          // a crash of a running process: a finding; restart it as a supervisor would
          options.onUnplannedExit?.({
            name: options.name,
            code,
            signal,
            at: new Date().toISOString(),
          });
          setTimeout(() => {
            if (!closed && !child) void startOnce().catch(() => undefined);
          }, 1_000);
        }
        resolve({ code, signal });
      });
    });
    return readyPromise;
  };

  /**
   * Start, and start again after an exit before ready — a process that cannot reach its
   * database at start-up exits, and its supervisor tries again — until ready or
   * `readyTimeoutMs` passed.
   */
  const startUntilReady = async (): Promise<void> => {
    const timeoutMs = options.readyTimeoutMs ?? 120_000;
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${options.name} not ready after ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    timedOut.catch(() => undefined); // raced below; never left unhandled between attempts
    try {
      for (;;) {
        try {
          await Promise.race([spawnOnce(), timedOut]);
          return;
        } catch (error) {
          if (!(error instanceof EarlyExit) || closed || Date.now() > deadline) throw error;
          failedStarts++;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    } finally {
      clearTimeout(timer);
    }
  };

  const startOnce = () =>
    (starting ??= startUntilReady().finally(() => {
      starting = undefined;
    }));

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
    get failedStarts() {
      return failedStarts;
    },
    start() {
      closed = false;
      return startOnce();
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
