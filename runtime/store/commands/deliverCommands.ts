/**
 * Hand a device its due commands: PENDING, due (`next_attempt_at` passed or unset), not
 * expired — oldest first, marked DELIVERED with `delivered_at`, with FOR UPDATE SKIP LOCKED so
 * two gateways (or a push and a poll) never hand out one command twice, and audited — all in
 * one statement (a delivery has no webhook event). Cloud tier only.
 */
import { sql } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';
import {
  byCreation,
  COMMAND_COLUMNS,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/** How a command reaches the device (recorded in the audit row). */
export type DeliveryChannel = 'websocket' | 'poll';

/** Mark up to `limit` due commands of `deviceId` DELIVERED and return them, oldest first. */
export async function deliverCommands(
  store: Store,
  deviceId: string,
  options: { limit: number; via: DeliveryChannel; actor: CommandActor },
  now: Date,
): Promise<CommandRecord[]> {
  const at = store.codec.time(now);
  const parameters: unknown[] = [
    deviceId,
    at,
    at,
    options.limit,
    at,
    options.actor.actor,
    options.actor.role,
    options.via,
    options.actor.sourceIp ?? null,
    at,
  ];
  const p = (i: number) => parameters[i];
  try {
    const { rows } = await executeCached(store, 'deliverCommands', parameters, () => ({
      compile: () =>
        sql<CommandRow>`
          WITH due AS (
            SELECT command_id FROM device_commands
            WHERE device_id = ${p(0)} AND status = 'PENDING'
              AND (next_attempt_at IS NULL OR next_attempt_at <= ${p(1)}::timestamptz)
              AND (expires_at IS NULL OR expires_at > ${p(2)}::timestamptz)
            ORDER BY created_at, command_id
            LIMIT ${p(3)}::int
            FOR UPDATE SKIP LOCKED
          ),
          delivered AS (
            UPDATE device_commands AS d SET status = 'DELIVERED', delivered_at = ${p(4)}::timestamptz
            FROM due WHERE d.command_id = due.command_id
            RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(`d.${c}`)))}
          ),
          audit AS (
            INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
              details, source_ip, created_at)
            SELECT 'COMMAND_DELIVERED', ${p(5)}, ${p(6)}, x.device_id, x.command_id,
              jsonb_build_object('via', ${p(7)}::text, 'retry_count', x.retry_count),
              ${p(8)}, ${p(9)}::timestamptz
            FROM delivered AS x
            ORDER BY x.created_at, x.command_id
          )
          SELECT * FROM delivered`.compile(store.db),
    }));
    return rows.map((row) => rowToCommand(store.codec, row)).sort(byCreation);
  } catch (error) {
    throw translateDriverError(error, `deliver commands to device ${deviceId}`);
  }
}
