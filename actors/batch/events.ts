/**
 * Events of the command batch machine, built by typed constructors so no event name is a
 * string literal scattered through the gateway.
 */
import type { BatchItemStatus } from './batchMachine.js';

/** A command's status as the database now shows it. */
export interface BatchCommandUpdate {
  commandId: string;
  status: BatchItemStatus;
}

/** Every event the batch machine accepts. */
export type BatchEvent =
  | { type: 'batch.start' }
  | { type: 'batch.commands.updated'; updates: readonly BatchCommandUpdate[] }
  | { type: 'batch.cancel' };

/** Constructors for {@link BatchEvent}s. */
export const batchEvents = {
  start: (): BatchEvent => ({ type: 'batch.start' }),
  updated: (updates: readonly BatchCommandUpdate[]): BatchEvent => ({
    type: 'batch.commands.updated',
    updates,
  }),
  cancel: (): BatchEvent => ({ type: 'batch.cancel' }),
};
