/**
 * Saffron's own WASI 0.2 host for components: the imports handed to jco's `instantiate` in
 * the worker thread (see transpile.ts). It is deliberately tiny and touches no host state:
 *
 * - stdin, stdout and stderr are the call's in-memory {@link GuestIo} (the same buffers and
 *   stdout limit as preview1 guests); terminals do not exist;
 * - `wasi:cli/environment` is empty but for the program name (`guest.wasm`), no cwd;
 * - clocks read the process clock; random bytes come from `crypto.getRandomValues`;
 * - `wasi:filesystem/preopens` lists no directory, so no descriptor ever exists and no file
 *   can be opened (the preview1 adapter answers a guest's `path_open` with EBADF, exactly as
 *   the preview1 sandbox does);
 * - every member of an interface not implemented here — a function a later WASI release adds,
 *   a filesystem method — is a function that throws {@link HostRefusal}, which the worker
 *   reports as WASM_IMPORT_REFUSED. Interfaces not listed at all never link (transpile.ts).
 *
 * Resources are plain classes, one set per thread, as jco expects (`instanceof` checks on the
 * handles it lowers); they dispatch to the running call's {@link GuestIo}, like the preview1
 * imports (guestIo.ts). A `stream-error` is thrown as `{ tag: 'closed' }`, jco's convention for
 * the error case of a `result` that is not an `Error`. Exits and the stdout limit throw
 * `Error` subclasses, which jco rethrows through the guest's frames, so they end the call.
 */
import { GuestExit, type GuestIo } from './guestIo.js';

/** A component called a host function the sandbox refuses. */
export class HostRefusal extends Error {
  override readonly name = 'HostRefusal';
  constructor(readonly member: string) {
    super(`the sandbox refuses ${member}: no filesystem, sockets or other host access`);
  }
}

/**
 * jco's error value of a `stream-error` result: thrown, and turned by jco into `err(closed)`
 * because it is not an `Error` (an `Error` would be rethrown through the guest as a trap).
 */
const CLOSED = { tag: 'closed' } as const;
/** Throw {@link CLOSED}. */
function closed(): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- jco's convention, see CLOSED
  throw CLOSED;
}
const MAX_READ = 65_536;

const pending = new Int32Array(new SharedArrayBuffer(4));
const nowNs = (): bigint => process.hrtime.bigint();

/** Something a guest waits on: ready at once, or at a monotonic instant (ns). */
class Pollable {
  constructor(private readonly at?: bigint) {}
  ready(): boolean {
    return this.at === undefined || nowNs() >= this.at;
  }
  /** Sleep the thread until ready; the call's timeout still terminates it. */
  block(): void {
    if (this.at === undefined) return;
    const left = Number(this.at - nowNs()) / 1e6;
    if (left > 0) Atomics.wait(pending, 0, 0, left);
  }
  /** @internal */
  dueAt(): bigint {
    return this.at ?? 0n;
  }
}

class IoError {
  toDebugString(): string {
    return 'stream error';
  }
}

/** Build the import object of one thread; `current()` is the running call's stdio. */
export function componentImports(current: () => GuestIo): Record<string, object> {
  class InputStream {
    read(len: bigint): Uint8Array {
      const io = current();
      if (io.stdinDone()) closed();
      return io.readStdin(Math.min(Number(len), MAX_READ));
    }
    blockingRead(len: bigint): Uint8Array {
      return this.read(len);
    }
    skip(len: bigint): bigint {
      return BigInt(this.read(len).length);
    }
    blockingSkip(len: bigint): bigint {
      return this.skip(len);
    }
    subscribe(): Pollable {
      return new Pollable();
    }
  }

  class OutputStream {
    constructor(private readonly fd: 1 | 2) {}
    checkWrite(): bigint {
      return BigInt(MAX_READ);
    }
    write(contents: Uint8Array): void {
      current().write(this.fd, contents);
    }
    blockingWriteAndFlush(contents: Uint8Array): void {
      current().write(this.fd, contents);
    }
    flush(): void {}
    blockingFlush(): void {}
    writeZeroes(len: bigint): void {
      current().write(this.fd, new Uint8Array(Number(len)));
    }
    blockingWriteZeroesAndFlush(len: bigint): void {
      this.writeZeroes(len);
    }
    splice(): bigint {
      return closed();
    }
    blockingSplice(): bigint {
      return closed();
    }
    subscribe(): Pollable {
      return new Pollable();
    }
  }

  class TerminalInput {}
  class TerminalOutput {}
  class Descriptor {}
  class DirectoryEntryStream {}

  const randomBytes = (len: bigint): Uint8Array => {
    const out = new Uint8Array(Number(len));
    for (let at = 0; at < out.length; at += MAX_READ)
      crypto.getRandomValues(out.subarray(at, Math.min(out.length, at + MAX_READ)));
    return out;
  };
  const randomU64 = (): bigint => new BigUint64Array(randomBytes(8n).buffer)[0]!;

  const interfaces: Record<string, Record<string, unknown>> = {
    'wasi:cli/environment': {
      getEnvironment: () => [],
      getArguments: () => ['guest.wasm'],
      initialCwd: () => undefined,
    },
    'wasi:cli/exit': {
      exit: (status: { tag: 'ok' | 'err' }) => {
        throw new GuestExit(status.tag === 'ok' ? 0 : 1);
      },
      exitWithCode: (code: number) => {
        throw new GuestExit(code);
      },
    },
    'wasi:cli/stdin': { getStdin: () => new InputStream() },
    'wasi:cli/stdout': { getStdout: () => new OutputStream(1) },
    'wasi:cli/stderr': { getStderr: () => new OutputStream(2) },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:clocks/monotonic-clock': {
      now: nowNs,
      resolution: () => 1n,
      subscribeInstant: (when: bigint) => new Pollable(when),
      subscribeDuration: (duration: bigint) => new Pollable(nowNs() + duration),
    },
    'wasi:clocks/wall-clock': {
      now: () => {
        const ms = Date.now();
        return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1e6 };
      },
      resolution: () => ({ seconds: 0n, nanoseconds: 1e6 }),
    },
    'wasi:filesystem/preopens': { getDirectories: () => [] },
    'wasi:filesystem/types': {
      Descriptor,
      DirectoryEntryStream,
      filesystemErrorCode: () => undefined,
    },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': {
      Pollable,
      poll: (list: Pollable[]) => {
        if (list.length === 0) throw new HostRefusal('wasi:io/poll.poll of an empty list');
        if (!list.some((p) => p.ready()))
          list.reduce((a, b) => (b.dueAt() < a.dueAt() ? b : a)).block();
        return new Uint32Array(list.flatMap((p, i) => (p.ready() ? [i] : [])));
      },
    },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/random': { getRandomBytes: randomBytes, getRandomU64: randomU64 },
    'wasi:random/insecure': {
      getInsecureRandomBytes: randomBytes,
      getInsecureRandomU64: randomU64,
    },
    'wasi:random/insecure-seed': { insecureSeed: () => [randomU64(), randomU64()] },
  };

  // Members jco asks for that are not implemented: a function that refuses when called.
  const refusing = (name: string, members: Record<string, unknown>) =>
    new Proxy(members, {
      get: (target, member) =>
        typeof member !== 'string' || member in target
          ? target[member as string]
          : () => {
              throw new HostRefusal(`${name}.${member}`);
            },
    });
  return Object.fromEntries(
    Object.entries(interfaces).map(([name, members]) => [name, refusing(name, members)]),
  );
}
