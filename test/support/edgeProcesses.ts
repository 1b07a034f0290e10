/**
 * Real `saffron` processes for end-to-end tests: a cloud (`saffron cloud serve`) and edge
 * agents (`saffron edge run`), each started through the package's launcher and awaited on
 * the `{listening}` line it prints — never on time. Their stderr is kept so a failing test
 * can show what the process said.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const launcher = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));

/** A started `saffron` process. */
export interface SaffronProcess {
  child: ChildProcess;
  /** The URL of its `{listening}` line. */
  url: string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  /** What it wrote on stderr so far. */
  stderr(): string;
}

/**
 * Spawn `saffron …args` and wait for its `{"listening": …}` stdout line; rejects (with its
 * stderr) when it exits first.
 */
export function startSaffron(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<SaffronProcess> {
  const child = spawn(process.execPath, [launcher, ...args], {
    // fake upstreams of the tests listen on loopback
    env: { ...process.env, SAFFRON_HTTP_ALLOW_PRIVATE: 'loopback', ...options.env },
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    if (err.length > 2_000_000) err = err.slice(-1_000_000);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"listening"'));
      if (line)
        resolve({
          child,
          url: (JSON.parse(line) as { listening: string }).listening,
          exited,
          stderr: () => err,
        });
    });
    void exited.then((code) =>
      reject(
        new Error(`saffron ${args.slice(0, 2).join(' ')} exited early (${String(code)}):\n${err}`),
      ),
    );
  });
}

/** Send `signal` and wait for the exit code. */
export async function stopSaffron(
  proc: SaffronProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  proc.child.kill(signal);
  return proc.exited;
}

/** Poll `check` until it returns a value other than undefined (each poll waits `everyMs`). */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  everyMs = 100,
): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
