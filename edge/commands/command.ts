/**
 * Commands as the device receives them (the cloud's JSON form, pushed in a `command` frame
 * or returned by `GET …/commands`) and the handler contract the agent fills in.
 */
import { z } from 'zod';

/** A command from the cloud (unknown members are kept). */
export interface EdgeCommand {
  command_id: string;
  command_type: string;
  payload: unknown;
  retry_count?: number;
  [member: string]: unknown;
}

/** What a handler gets besides the payload. */
export interface CommandContext {
  /** Aborted when the command channel stops. */
  signal: AbortSignal;
  /**
   * Run `callback` once the cloud has the ack (e.g. REBOOT restarts only after reporting
   * it ran). Not run when the process ends first: a redelivered command is acked with its
   * stored result and not run again.
   */
  afterAck(callback: () => void): void;
}

/**
 * Carries out one command type. Returns the result to report (any JSON value, or nothing);
 * throwing reports the command FAILED with the error.
 */
export type CommandHandler = (
  payload: unknown,
  command: EdgeCommand,
  context: CommandContext,
) => unknown;

/** Handlers by command type (`UPDATE_CONFIG`, `sync_wasm`, …). */
export type CommandHandlers = Readonly<Record<string, CommandHandler>>;

const commandShape = z.looseObject({
  command_id: z.string().min(1).max(100),
  command_type: z.string().min(1).max(100),
  payload: z.unknown(),
});

/** `value` as a command, or undefined when it is not one. */
export function parseCommand(value: unknown): EdgeCommand | undefined {
  const parsed = commandShape.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
