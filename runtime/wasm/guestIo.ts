/**
 * The guest's file descriptors, implemented in memory: stdin is the step's JSON input, stdout
 * and stderr are bounded buffers, and nothing else exists.
 *
 * `node:wasi` only takes host file descriptors for stdio. Handing it temp files would let a
 * guest fill the disk before its timeout and cost three file opens per call; pipes are not
 * available to a thread without a child process, and a guest writing more than a pipe buffer
 * while nobody reads on its (blocked) thread would deadlock. Worse, both leave real host
 * descriptors in the guest's fd table: a guest calling `fd_close(1)` would close a host fd
 * whose number the process may hand to a database file a moment later. So every `fd_*`
 * function, every `path_*` and `sock_*` function, `proc_exit` and `proc_raise` are
 * implemented here, in JavaScript, against this table and the guest's memory; `node:wasi`
 * keeps only what touches no descriptor and no host state — args, environment (both empty
 * but for the program name), clocks, random bytes, `sched_yield` and `poll_oneoff` (whose fd
 * subscriptions see the `/dev/null` descriptor the worker passes as the WASI instance's
 * stdio). `proc_raise` in particular must not reach uvwasi: it signals the host process.
 *
 * The stdout limit is enforced as the guest writes: the write that would cross it throws out
 * of the guest (a JavaScript exception unwinds WebAssembly frames and cannot be caught by the
 * guest), so a runaway writer stops at once instead of at its timeout.
 *
 * The import functions are created once per thread ({@link guestImports}) and dispatch to
 * the current call's {@link GuestIo}: V8 links plain, long-lived functions fastest, and a
 * thread runs one guest at a time.
 */

// WASI preview1 errno values (wasi_snapshot_preview1 `errno`).
const SUCCESS = 0;
const EBADF = 8;
const EFAULT = 21;
const EINVAL = 28;
const ENOSYS = 52;
const ENOTDIR = 54;
const ENOTSOCK = 57;
const ESPIPE = 70;

// fdstat rights bits used below.
const RIGHT_FD_READ = 1n << 1n;
const RIGHT_FD_WRITE = 1n << 6n;
const RIGHT_POLL_FD_READWRITE = 1n << 27n;

/** Thrown from `proc_exit`: the guest asked to end with `code`. */
export class GuestExit extends Error {
  override readonly name = 'GuestExit';
  constructor(readonly code: number) {
    super(`the guest exited with code ${code}`);
  }
}

/** Thrown when the guest writes past the stdout limit. */
export class GuestOutputLimit extends Error {
  override readonly name = 'GuestOutputLimit';
  constructor(readonly limit: number) {
    super(`the guest wrote more than ${limit} bytes on stdout`);
  }
}

/** Limits and input of one guest run. */
export interface GuestIoOptions {
  stdin: Uint8Array;
  maxStdoutBytes: number;
  maxStderrBytes: number;
}

/** The memory export a WASI guest shares with its host. */
interface GuestMemory {
  readonly buffer: ArrayBuffer;
}

class Chunks {
  private parts: Uint8Array[] = [];
  size = 0;
  push(bytes: Uint8Array): void {
    this.parts.push(bytes.slice());
    this.size += bytes.length;
  }
  concat(): Uint8Array {
    return Buffer.concat(this.parts, this.size);
  }
}

/** The stdio of one guest run: state plus the preview1 operations on it. */
export class GuestIo {
  private memory: GuestMemory | undefined;
  private stdinAt = 0;
  private readonly out = new Chunks();
  private readonly err = new Chunks();
  private errTruncated = false;
  private readonly open = new Set([0, 1, 2]);

  constructor(private readonly options: GuestIoOptions) {}

  /** Give the instance's memory once it exists (before the guest starts). */
  bind(memory: GuestMemory): void {
    this.memory = memory;
  }

  /** Everything the guest wrote on stdout. */
  stdout(): Uint8Array {
    return this.out.concat();
  }

  /** The first `maxStderrBytes` the guest wrote on stderr. */
  stderr(): { text: string; truncated: boolean } {
    return { text: Buffer.from(this.err.concat()).toString('utf8'), truncated: this.errTruncated };
  }

  isOpen(fd: number): boolean {
    return this.open.has(fd);
  }

  // Before `bind` (a start function running during instantiation) no pointer is valid.
  private inBounds(ptr: number, len: number): boolean {
    const memory = this.memory;
    return memory !== undefined && ptr >= 0 && len >= 0 && ptr + len <= memory.buffer.byteLength;
  }

  private view(): DataView {
    return new DataView(this.memory!.buffer);
  }

  /** The (ptr, len) pairs of an iovec array, or undefined when one leaves memory. */
  private iovecs(ptr: number, count: number): [number, number][] | undefined {
    if (count > 1024 || !this.inBounds(ptr, count * 8)) return undefined;
    const dv = this.view();
    const result: [number, number][] = [];
    for (let i = 0; i < count; i++) {
      const buf = dv.getUint32(ptr + i * 8, true);
      const len = dv.getUint32(ptr + i * 8 + 4, true);
      if (!this.inBounds(buf, len)) return undefined;
      result.push([buf, len]);
    }
    return result;
  }

  /** Up to `max` more bytes of stdin (empty at the end): the WASI 0.2 input stream's read. */
  readStdin(max: number): Uint8Array {
    const stdin = this.options.stdin;
    const n = Math.max(0, Math.min(max, stdin.length - this.stdinAt));
    const bytes = stdin.slice(this.stdinAt, this.stdinAt + n);
    this.stdinAt += n;
    return bytes;
  }

  /** Whether stdin has been read to its end. */
  stdinDone(): boolean {
    return this.stdinAt >= this.options.stdin.length;
  }

  /**
   * Append `bytes` to stdout (fd 1) or stderr (fd 2). Stdout throws {@link GuestOutputLimit}
   * past its limit; stderr keeps its first `maxStderrBytes` and drops the rest.
   */
  write(fd: 1 | 2, bytes: Uint8Array): void {
    if (fd === 1) {
      if (this.out.size + bytes.length > this.options.maxStdoutBytes)
        throw new GuestOutputLimit(this.options.maxStdoutBytes);
      this.out.push(bytes);
      return;
    }
    const room = Math.max(0, this.options.maxStderrBytes - this.err.size);
    if (bytes.length > room) this.errTruncated = true;
    if (room > 0) this.err.push(bytes.subarray(0, Math.min(room, bytes.length)));
  }

  fdRead(fd: number, iovsPtr: number, iovsLen: number, nreadPtr: number): number {
    if (fd !== 0 || !this.open.has(fd)) return EBADF;
    const list = this.iovecs(iovsPtr, iovsLen);
    if (!list || !this.inBounds(nreadPtr, 4)) return EFAULT;
    const target = new Uint8Array(this.memory!.buffer);
    const stdin = this.options.stdin;
    let total = 0;
    for (const [buf, len] of list) {
      const n = Math.min(len, stdin.length - this.stdinAt);
      target.set(stdin.subarray(this.stdinAt, this.stdinAt + n), buf);
      this.stdinAt += n;
      total += n;
      if (n < len) break;
    }
    this.view().setUint32(nreadPtr, total, true);
    return SUCCESS;
  }

  fdWrite(fd: number, iovsPtr: number, iovsLen: number, nwrittenPtr: number): number {
    if (fd === 0 || !this.open.has(fd)) return EBADF;
    const list = this.iovecs(iovsPtr, iovsLen);
    if (!list || !this.inBounds(nwrittenPtr, 4)) return EFAULT;
    let total = 0;
    for (const [buf, len] of list) {
      this.write(fd === 1 ? 1 : 2, new Uint8Array(this.memory!.buffer, buf, len));
      total += len;
    }
    this.view().setUint32(nwrittenPtr, total, true);
    return SUCCESS;
  }

  fdFdstatGet(fd: number, statPtr: number): number {
    if (!this.open.has(fd)) return EBADF;
    if (!this.inBounds(statPtr, 24)) return EFAULT;
    const dv = this.view();
    dv.setUint8(statPtr, 0); // filetype unknown: not a tty, not seekable — like a pipe
    dv.setUint16(statPtr + 2, 0, true);
    const base = (fd === 0 ? RIGHT_FD_READ : RIGHT_FD_WRITE) | RIGHT_POLL_FD_READWRITE;
    dv.setBigUint64(statPtr + 8, base, true);
    dv.setBigUint64(statPtr + 16, 0n, true);
    return SUCCESS;
  }

  fdFilestatGet(fd: number, bufPtr: number): number {
    if (!this.open.has(fd)) return EBADF;
    if (!this.inBounds(bufPtr, 64)) return EFAULT;
    new Uint8Array(this.memory!.buffer, bufPtr, 64).fill(0);
    this.view().setBigUint64(bufPtr + 24, 1n, true); // nlink
    return SUCCESS;
  }

  fdClose(fd: number): number {
    return this.open.delete(fd) ? SUCCESS : EBADF;
  }
}

/** Preview1 functions that name a path or a socket: nothing of the kind exists in the sandbox. */
const PATH_FUNCTIONS = [
  'path_create_directory',
  'path_filestat_get',
  'path_filestat_set_times',
  'path_link',
  'path_open',
  'path_readlink',
  'path_remove_directory',
  'path_rename',
  'path_symlink',
  'path_unlink_file',
] as const;
const SOCK_FUNCTIONS = ['sock_accept', 'sock_recv', 'sock_send', 'sock_shutdown'] as const;
/** fd functions that make no sense on stdio; the guest gets EBADF as for a missing fd. */
const UNSUPPORTED_FD_FUNCTIONS = [
  'fd_advise',
  'fd_allocate',
  'fd_fdstat_set_rights',
  'fd_filestat_set_size',
  'fd_filestat_set_times',
  'fd_prestat_get',
  'fd_prestat_dir_name',
  'fd_readdir',
  'fd_renumber',
] as const;

type WasiFunction = (...args: number[]) => number;

/**
 * The fd, path, sock and proc functions of preview1, created once and dispatching to the
 * {@link GuestIo} that `current()` returns (the running call's).
 */
export function guestImports(current: () => GuestIo): Record<string, WasiFunction> {
  const onStdio =
    (errno: number): WasiFunction =>
    (fd) =>
      current().isOpen(fd) ? errno : EBADF;
  const imports: Record<string, WasiFunction> = {
    fd_read: (fd, iovs, len, nread) => current().fdRead(fd, iovs, len, nread),
    fd_write: (fd, iovs, len, nwritten) => current().fdWrite(fd, iovs, len, nwritten),
    fd_pread: onStdio(ESPIPE),
    fd_pwrite: onStdio(ESPIPE),
    fd_seek: onStdio(ESPIPE),
    fd_tell: onStdio(ESPIPE),
    fd_sync: onStdio(EINVAL),
    fd_datasync: onStdio(EINVAL),
    fd_fdstat_get: (fd, ptr) => current().fdFdstatGet(fd, ptr),
    fd_fdstat_set_flags: onStdio(SUCCESS),
    fd_filestat_get: (fd, ptr) => current().fdFilestatGet(fd, ptr),
    fd_close: (fd) => current().fdClose(fd),
    proc_exit: (code) => {
      throw new GuestExit(code >>> 0);
    },
    proc_raise: () => ENOSYS,
  };
  for (const name of UNSUPPORTED_FD_FUNCTIONS) imports[name] = () => EBADF;
  for (const name of PATH_FUNCTIONS) imports[name] = onStdio(ENOTDIR);
  for (const name of SOCK_FUNCTIONS) imports[name] = onStdio(ENOTSOCK);
  return imports;
}
