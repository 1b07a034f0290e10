/**
 * Command push routing between gateway processes (DESIGN §6): a commit that makes commands
 * deliverable sends NOTIFY on `saffron_commands` (delivered when the transaction commits)
 * naming the devices; every gateway LISTENs, and the one holding a device's socket pushes.
 *
 * Payload: `schema|origin|device,device,…`. The schema keeps two deployments that share a
 * database (or parallel test schemas) apart; the origin lets a gateway skip what it sent
 * itself (it already pushed locally). Device ids cannot contain `|` or `,` (see
 * authenticate.ts), and long lists are split to stay under NOTIFY's 8000-byte payload.
 *
 * The listening connection is shared with the process's other channels (listenChannel.ts).
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { ChannelListener } from './listenChannel.js';

/** The channel command notifications use. */
export const COMMANDS_CHANNEL = 'saffron_commands';

const MAX_PAYLOAD = 7000;

/** Queue notifications for `deviceIds` in the caller's transaction (PostgreSQL only). */
export async function notifyCommands(
  h: StoreHandle,
  deviceIds: readonly string[],
  origin: string,
): Promise<void> {
  if (h.dialect !== 'postgres' || deviceIds.length === 0) return;
  const chunks: string[] = [];
  let current = '';
  for (const id of new Set(deviceIds)) {
    if (current && current.length + id.length + 1 > MAX_PAYLOAD) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current},${id}` : id;
  }
  if (current) chunks.push(current);
  for (const chunk of chunks)
    await sql`SELECT pg_notify(${COMMANDS_CHANNEL}, current_schema() || '|' || ${`${origin}|${chunk}`})`.execute(
      h.db,
    );
}

/** A command notification. */
export interface CommandNotification {
  origin: string;
  deviceIds: string[];
}

/** Options of {@link listenForCommands}. */
export interface CommandListenerOptions {
  onNotify(notification: CommandNotification): void;
  /** The connection was re-established; notifications may have been missed. */
  onReconnect(): void;
}

/** Listen for command notifications on `listener`; returns a function that stops. */
export function listenForCommands(
  listener: ChannelListener,
  options: CommandListenerOptions,
): Promise<() => Promise<void>> {
  return listener.listen(COMMANDS_CHANNEL, {
    onPayload(payload) {
      const [origin = '', list = ''] = payload.split('|');
      options.onNotify({ origin, deviceIds: list.split(',').filter((id) => id !== '') });
    },
    onReconnect: () => options.onReconnect(),
  });
}
