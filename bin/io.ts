/**
 * What a CLI command may touch of the outside world, passed in rather than taken from
 * `process`, so tests run commands in-process and read what they printed.
 */
import { SaffronError, toError } from '../runtime/errors.js';

/** A writable text sink with an optional TTY flag. */
export interface Sink {
  write(text: string): void;
  isTTY?: boolean;
}

/** The I/O of one CLI invocation. */
export interface CliIo {
  stdout: Sink;
  stderr: Sink;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The process's own I/O. */
export function processIo(): CliIo {
  return {
    stdout: { write: (t) => void process.stdout.write(t), isTTY: process.stdout.isTTY },
    stderr: { write: (t) => void process.stderr.write(t), isTTY: process.stderr.isTTY },
    env: process.env,
    cwd: process.cwd(),
  };
}

/** A command's failure that carries its exit code (1 = failure found, 2 = usage). */
export class CliExit extends Error {
  override readonly name = 'CliExit';
  constructor(
    readonly exitCode: number,
    message = '',
  ) {
    super(message);
  }
}

/** Print an error the way every command does, and return the exit code for it. */
export function reportError(io: CliIo, error: unknown, json: boolean): number {
  if (error instanceof CliExit) {
    if (error.message) io.stderr.write(`saffron: ${error.message}\n`);
    return error.exitCode;
  }
  const e = toError(error);
  const code = e instanceof SaffronError ? e.code : 'INTERNAL';
  if (json)
    io.stdout.write(`${JSON.stringify({ ok: false, error: { code, message: e.message } })}\n`);
  io.stderr.write(
    `saffron: error: ${e.message}${code === 'INTERNAL' && e.stack ? `\n${e.stack}` : ''}\n`,
  );
  return 1;
}

/** Write a value as one line of JSON. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Print `rows` (the first one a header) as left-aligned columns two spaces apart. */
export function printRows(io: CliIo, rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows)
    io.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}
