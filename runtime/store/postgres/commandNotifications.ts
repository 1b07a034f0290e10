/**
 * Command push routing between gateway processes: a commit that makes commands
 * deliverable sends NOTIFY on `saffron_commands` (delivered when the transaction commits)
 * naming the devices; every gateway LISTENs, and the one holding a device's socket pushes.
 *
 * Payload: `schema|origin|device,device,…`. The schema keeps two deployments that share a
 * database (or parallel test schemas) apart; the origin lets a gateway skip what it sent
 * itself (it already pushed locally). Device ids cannot contain `|` or `,` (see
 * authenticate.ts), and long lists are split to stay under NOTIFY's 8000-byte payload.
 *
 * Gateways hear it on their one listening connection (listenChannel.ts), with the cache
 * invalidations of changeNotifications.ts.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import { joinInChunks } from './changeNotifications.js';

/** The channel command notifications use. */
export const COMMANDS_CHANNEL = 'saffron_commands';

/** Queue notifications for `deviceIds` in the caller's transaction (PostgreSQL only). */
export async function notifyCommands(
  h: StoreHandle,
  deviceIds: readonly string[],
  origin: string,
): Promise<void> {
  if (h.dialect !== 'postgres' || deviceIds.length === 0) return;
  const chunks = joinInChunks(deviceIds);
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

/** Read a notification of {@link COMMANDS_CHANNEL} (its payload after the schema). */
export function parseCommandNotification(body: string): CommandNotification {
  const [origin = '', list = ''] = body.split('|');
  return { origin, deviceIds: list.split(',').filter((id) => id !== '') };
}
