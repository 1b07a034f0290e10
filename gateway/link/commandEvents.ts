/**
 * In-process notifications about device commands between the gateway's route modules. The
 * device hub (commands.ts) owns the sockets; fleet operations (batches, broadcasts,
 * schedules) create commands in bulk and follow their acks. Rather than reach into each
 * other, both sides meet here:
 *
 * - `wake(deviceIds)`: commands became deliverable — push them if the device's socket is on
 *   this gateway (the hub attaches itself; other gateways learn through NOTIFY).
 * - `local()`: the hub's sockets, for a bulk creation (a broadcast's phase) that creates the
 *   commands of devices whose socket is here and idle DELIVERED, and pushes them after its
 *   commit — one statement for creation and delivery, as a single command's POST does.
 * - `acked(command)`: a device's ack was recorded (after its commit), from the socket or
 *   REST — listeners advance the batch or broadcast it belongs to.
 *
 * Listeners are called synchronously and must not throw or block; they schedule their own
 * work. Nothing here is durable: whoever listens must also reconcile from the database
 * (the fleet driver's periodic pass does), since an ack may land on another gateway.
 */
import type { CommandActor, CommandRecord } from '../commands/store/commands/command.js';

/** The device sockets of this gateway, as the hub offers them to bulk command creation. */
export interface LocalSockets {
  /** Who delivers (the audit actor of `COMMAND_DELIVERED`). */
  readonly actor: CommandActor;
  /** Push due commands to `deviceId` if its socket is here. */
  wake(deviceId: string): void;
  /** Devices whose socket is here and idle: a command created for them may be pushed at once. */
  idleDevices(): string[];
  /** Push a command created DELIVERED to its device's socket, if it is still here. */
  pushDelivered(command: CommandRecord): void;
}

/** The command event bus of one gateway. */
export interface CommandEvents {
  /** Push due commands to these devices if their sockets are here. */
  wake(deviceIds: Iterable<string>): void;
  /** The hub's sockets (one hub per gateway; a later call replaces it). */
  attachSockets(sockets: LocalSockets): void;
  /** The hub's sockets, if a hub is attached. */
  local(): LocalSockets | undefined;
  /** A device's ack was recorded. */
  acked(command: CommandRecord): void;
  /** Listen to recorded acks; returns the function that stops listening. */
  onAcked(listener: (command: CommandRecord) => void): () => void;
}

/** A new, empty bus. */
export function createCommandEvents(
  onListenerError: (error: unknown) => void = () => {},
): CommandEvents {
  let sockets: LocalSockets | undefined;
  const listeners = new Set<(command: CommandRecord) => void>();
  return {
    wake(deviceIds) {
      if (!sockets) return;
      for (const id of deviceIds) sockets.wake(id);
    },
    attachSockets(attached) {
      sockets = attached;
    },
    local: () => sockets,
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
