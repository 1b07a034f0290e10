/**
 * Error reporting of the engine commands. Their failures are mostly the runtime refusing an
 * operation (WORKFLOW_NOT_FOUND, WORKFLOW_NOT_WAITING, WORKFLOW_NOT_RETRYABLE, …); an
 * operator scripting around the CLI greps for the code, so it leads the message.
 */
import type { Command } from 'commander';
import { SaffronError } from '../runtime/index.js';
import { CliExit, type CliIo } from './io.js';

/** Wrap a commander action so a SaffronError prints as `saffron: error: CODE: message`. */
export function engineAction<A extends unknown[]>(
  io: CliIo,
  action: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args) => {
    try {
      await action(...args);
    } catch (error) {
      if (!(error instanceof SaffronError)) throw error;
      const command = args.at(-1) as Command;
      if (command.opts<{ json?: boolean }>().json)
        io.stdout.write(
          `${JSON.stringify({ ok: false, error: { code: error.code, message: error.message } })}\n`,
        );
      io.stderr.write(`saffron: error: ${error.code}: ${error.message}\n`);
      throw new CliExit(1);
    }
  };
}
