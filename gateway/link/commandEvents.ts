/**
 * In-process notifications about device commands between the gateway's route modules. The
 * device hub (commands.ts) owns the sockets; fleet operations (batches, broadcasts,
 * schedules) create commands in bulk and follow their acks. Rather than reach into each
 * other, both sides meet here:
 *
 * - `wake(deviceIds)`: commands became deliverable — push them if the device's socket is on
 *   this gateway (the hub attaches its `wake`; other gateways learn through NOTIFY).
 * - `acked(command)`: a device's ack was recorded (after its commit), from the socket or
 *   REST — listeners advance the batch or broadcast it belongs to.
 *
 * Listeners are called synchronously and must not throw or block; they schedule their own
 * work. Nothing here is durable: whoever listens must also reconcile from the database
 * (the fleet driver's periodic pass does), since an ack may land on another gateway.
 */
import type { CommandRecord } from '../commands/store/commands/command.js';

/** The command event bus of one gateway. */
export interface CommandEvents {
  /** Push due commands to these devices if their sockets are here. */
  wake(deviceIds: Iterable<string>): void;
  /** The hub's local push (one per gateway; a later call replaces it). */
  attachWaker(wake: (deviceId: string) => void): void;
  /** A device's ack was recorded. */
  acked(command: CommandRecord): void;
  /** Listen to recorded acks; returns the function that stops listening. */
  onAcked(listener: (command: CommandRecord) => void): () => void;
}

/** A new, empty bus. */
export function createCommandEvents(
  onListenerError: (error: unknown) => void = () => {},
): CommandEvents {
  let waker: ((deviceId: string) => void) | undefined;
  const listeners = new Set<(command: CommandRecord) => void>();
  return {
    wake(deviceIds) {
      if (!waker) return;
      for (const id of deviceIds) waker(id);
    },
    attachWaker(wake) {
      waker = wake;
    },
    acked(command) {
      for (const listener of listeners) {
        try {
          listener(command);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    onAcked(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
