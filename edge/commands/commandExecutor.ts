/**
 * Runs each command id at most once and turns its outcome into the ack to send, recorded in
 * the ledger (commandLedger.ts) before anyone acks it. A delivery of an id that is running
 * right now shares that run; one that has finished gets the stored ack.
 *
 * Results are normalised to JSON once, before they are stored, so the stored ack and the
 * one sent are byte-for-byte the same value; a result larger than the cloud accepts in an
 * ack is replaced by `{truncated: true, size_bytes}` rather than making the ack bounce.
 */
import { SaffronError, toError, type EdgeStore } from '../../runtime/index.js';
import type { CommandContext, CommandHandlers, EdgeCommand } from './command.js';
import {
  ackOf,
  readCommandEntry,
  recordCommandFinished,
  recordCommandStarted,
  type CommandAck,
} from './commandLedger.js';
import { CommandError } from './errors.js';
import { withoutAbsolutePaths } from './errorText.js';

/** The cloud's limit on an ack's error text. */
const MAX_ERROR_CHARS = 2000;

/** What running (or finding) a command produced. */
export interface CommandRun {
  ack: CommandAck;
  /** True when the command had run before: the stored ack is returned, nothing ran. */
  replayed: boolean;
  /** Callbacks the handler asked to run after the ack (empty for a replay). */
  afterAck: (() => void)[];
}

/** What the executor needs. */
export interface CommandExecutorDeps {
  store: EdgeStore;
  handlers: CommandHandlers;
  /**
   * Checks a command before its handler runs (its signatures: verifyCommand.ts); throwing
   * records and acks it FAILED with the error's code, without running it.
   */
  verify: (command: EdgeCommand) => void;
  /** Largest result, as JSON, sent in an ack (48 KiB; the cloud's frames are 64 KiB). */
  maxResultBytes?: number;
  now?: () => Date;
}

/** Runs commands once. */
export interface CommandExecutor {
  run(command: EdgeCommand, signal: AbortSignal): Promise<CommandRun>;
}

const failure = (error: unknown): { code: string; message: string } => {
  const e = toError(error);
  return { code: e instanceof SaffronError ? e.code : 'COMMAND_FAILED', message: e.message };
};

/** Create an executor over `deps.handlers`. */
export function createCommandExecutor(deps: CommandExecutorDeps): CommandExecutor {
  const now = deps.now ?? (() => new Date());
  const maxResultBytes = deps.maxResultBytes ?? 48 * 1024;
  const running = new Map<string, Promise<CommandRun>>();

  const normalise = (value: unknown): unknown => {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new CommandError('COMMAND_RESULT_INVALID', 'the result is not JSON', { cause: error });
    }
    if (json === undefined) return undefined;
    const size = Buffer.byteLength(json);
    if (size > maxResultBytes) return { truncated: true, size_bytes: size };
    return JSON.parse(json) as unknown;
  };

  const execute = async (command: EdgeCommand, signal: AbortSignal): Promise<CommandRun> => {
    const id = command.command_id;
    const type = command.command_type;
    const previous = await readCommandEntry(deps.store, id);
    if (previous?.state === 'DONE')
      return { ack: ackOf(id, previous), replayed: true, afterAck: [] };
    const startedAt = previous ? new Date(previous.started_at) : now();
    let ack: CommandAck;
    const afterAck: (() => void)[] = [];
    if (previous?.state === 'RUNNING') {
      const interrupted = new CommandError(
        'COMMAND_INTERRUPTED',
        'the agent stopped while this command ran; it is not run again',
      );
      ack = failedAck(id, interrupted);
    } else {
      await recordCommandStarted(deps.store, id, type, startedAt);
      const handler = Object.hasOwn(deps.handlers, type) ? deps.handlers[type] : undefined;
      try {
        deps.verify(command);
        if (!handler)
          throw new CommandError('COMMAND_UNKNOWN_TYPE', `this agent has no handler for ${type}`);
        const context: CommandContext = { signal, afterAck: (callback) => afterAck.push(callback) };
        const result = normalise(await handler(command.payload, command, context));
        ack = { commandId: id, status: 'EXECUTED', ...(result !== undefined ? { result } : {}) };
      } catch (error) {
        ack = failedAck(id, error);
        afterAck.length = 0;
      }
    }
    await recordCommandFinished(deps.store, ack, type, startedAt, now());
    return { ack, replayed: false, afterAck };
  };

  return {
    run(command, signal) {
      const id = command.command_id;
      const current = running.get(id);
      if (current) return current.then((run) => ({ ...run, replayed: true, afterAck: [] }));
      const started = execute(command, signal).finally(() => running.delete(id));
      running.set(id, started);
      return started;
    },
  };
}

function failedAck(commandId: string, error: unknown): CommandAck {
  const { code, message } = failure(error);
  return {
    commandId,
    status: 'FAILED',
    result: { code },
    // operators read it in the cloud: no paths of the device's disk
    error: `${code}: ${withoutAbsolutePaths(message)}`.slice(0, MAX_ERROR_CHARS),
  };
}
