/**
 * Hand devices their due commands: PENDING, due (`next_attempt_at` passed or unset), not
 * expired — oldest first, marked DELIVERED with `delivered_at`, with FOR UPDATE SKIP LOCKED so
 * two gateways (or a push and a poll) never hand out one command twice, and audited — all in
 * one statement (a delivery has no webhook event). Cloud tier only.
 *
 * The statement serves many devices at once (a gateway's sessions deliver in groups,
 * gateway/link/commandGroups.ts: a broadcast that wakes thousands of sockets costs a handful
 * of statements, not one per device). The devices travel as one JSON array, so its text is
 * the same for any group size.
 */
import { sql } from 'kysely';
import { executeCached, translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
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

/** One device's share of a group delivery. */
export interface DeliveryRequest {
  deviceId: string;
  /** At most this many commands. */
  limit: number;
  via: DeliveryChannel;
  /** Who delivers, for the audit trail. */
  actor: CommandActor;
}

/**
 * Mark up to each request's `limit` due commands of its device DELIVERED, in one statement;
 * returns each request's commands, oldest first. Requests must name distinct devices.
 */
export async function deliverToDevices(
  store: CloudStore,
  requests: readonly DeliveryRequest[],
  now: Date,
): Promise<CommandRecord[][]> {
  if (new Set(requests.map((r) => r.deviceId)).size !== requests.length)
    throw new Error('deliverToDevices: one request per device');
  const at = store.codec.time(now);
  const rows = requests.map((r) => ({
    device_id: r.deviceId,
    lim: r.limit,
    via: r.via,
    actor: r.actor.actor,
    actor_role: r.actor.role,
    source_ip: r.actor.sourceIp ?? null,
  }));
  const parameters: unknown[] = [JSON.stringify(rows), at, at, at, at];
  const p = (i: number) => parameters[i];
  try {
    const { rows: delivered } = await executeCached(store, 'deliverToDevices', parameters, () => ({
      compile: () =>
        sql<CommandRow>`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(CAST(${p(0)} AS jsonb)) AS i(device_id text,
              lim int, via text, actor text, actor_role text, source_ip text)
          ),
          due AS (
            SELECT c.command_id FROM input AS i CROSS JOIN LATERAL (
              SELECT command_id FROM device_commands
              WHERE device_id = i.device_id AND status = 'PENDING'
                AND (next_attempt_at IS NULL OR next_attempt_at <= ${p(1)}::timestamptz)
                AND (expires_at IS NULL OR expires_at > ${p(2)}::timestamptz)
              ORDER BY created_at, command_id
              LIMIT i.lim
              FOR UPDATE SKIP LOCKED
            ) AS c
          ),
          delivered AS (
            UPDATE device_commands AS d SET status = 'DELIVERED', delivered_at = ${p(3)}::timestamptz
            FROM due WHERE d.command_id = due.command_id
            RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(`d.${c}`)))}
          ),
          audit AS (
            INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
              details, source_ip, created_at)
            SELECT 'COMMAND_DELIVERED', i.actor, i.actor_role, x.device_id, x.command_id,
              jsonb_build_object('via', i.via, 'retry_count', x.retry_count),
              i.source_ip, ${p(4)}::timestamptz
            FROM delivered AS x JOIN input AS i ON i.device_id = x.device_id
            ORDER BY x.device_id, x.created_at, x.command_id
          )
          SELECT * FROM delivered`.compile(store.db),
    }));
    const byDevice = new Map<string, CommandRecord[]>(requests.map((r) => [r.deviceId, []]));
    for (const row of delivered) byDevice.get(row.device_id)?.push(rowToCommand(store.codec, row));
    return requests.map((r) => byDevice.get(r.deviceId)!.sort(byCreation));
  } catch (error) {
    throw translateDriverError(
      error,
      requests.length === 1
        ? `deliver commands to device ${requests[0]!.deviceId}`
        : `deliver commands to ${requests.length} devices`,
    );
  }
}
