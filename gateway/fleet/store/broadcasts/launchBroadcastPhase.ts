/**
 * Start one rollout phase of a broadcast: pick up to `limit` matching devices that have no
 * command of this broadcast yet, in a deterministic order — md5(broadcast id : device id),
 * so every phase (and a retry of one) picks the same devices and the sample is spread
 * across the fleet instead of following device names — and create their commands and
 * COMMAND_CREATED audit rows, all in one statement (data-modifying CTEs), however many
 * devices there are. Devices are key-share locked while picked, so one deleted meanwhile
 * cannot break the insert. Call inside the transaction that saves the actor. Cloud tier only.
 *
 * A command is created PENDING, or — for a device in `deliverTo` (its socket is on this
 * gateway and idle) with no PENDING command before it — DELIVERED, with its
 * COMMAND_DELIVERED audit row, for the caller to push once the transaction has committed.
 * That is what a single command's POST does (insertCommand.ts): creation and delivery in one
 * statement instead of a creation and then a delivery per device. A push lost after the
 * commit is redelivered like any unacked command.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_COLUMNS,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from '../../../commands/store/commands/command.js';
import { deviceFilterCondition, type DeviceTargetFilter } from './deviceFilter.js';

/** One phase to launch. */
export interface BroadcastPhaseLaunch {
  broadcastId: string;
  /** 1-based phase number (stored in `batch_sequence`). */
  phase: number;
  filter: DeviceTargetFilter;
  /** Most devices to add; null for every remaining one. */
  limit: number | null;
  commandType: string;
  payload: unknown;
  maxRetries: number;
  expiresAt: Date | null;
  createdBy: string | null;
  /** The command version its payload was validated against (null: none registered). */
  commandVersion?: string | null;
  /** Devices whose socket is here and idle, and who delivers to them (see the header). */
  deliverTo?: { deviceIds: readonly string[]; deliverer: CommandActor };
}

/** What a launch created. */
export interface BroadcastPhaseLaunched {
  /** Every device that got a command (PENDING or DELIVERED). */
  devices: string[];
  /** The commands created DELIVERED: push them after the commit. */
  delivered: CommandRecord[];
}

/** Create the phase's commands. */
export async function launchBroadcastPhase(
  h: CloudHandle,
  launch: BroadcastPhaseLaunch,
  actor: CommandActor,
  now: Date,
): Promise<BroadcastPhaseLaunched> {
  if (launch.limit !== null && launch.limit <= 0) return { devices: [], delivered: [] };
  const id = launch.broadcastId;
  const at = h.codec.time(now);
  const details = h.codec.json({
    command_type: launch.commandType,
    max_retries: launch.maxRetries,
    expires_at: launch.expiresAt?.toISOString() ?? null,
    phase: launch.phase,
    ...(launch.commandVersion ? { command_version: launch.commandVersion } : {}),
  });
  const local = launch.deliverTo?.deviceIds.length ? launch.deliverTo : undefined;
  const deliverer = local?.deliverer;
  try {
    const result = await sql<CommandRow>`
      WITH picked AS (
        SELECT d.device_id FROM edge_devices d
        WHERE ${deviceFilterCondition(h.codec, launch.filter)}
          AND NOT EXISTS (SELECT 1 FROM device_commands c
                          WHERE c.broadcast_id = ${id}::uuid AND c.device_id = d.device_id)
        ORDER BY md5(${id} || ':' || d.device_id), d.device_id
        ${launch.limit === null ? sql`` : sql`LIMIT ${launch.limit}`}
        FOR KEY SHARE OF d),
      here AS (
        SELECT jsonb_array_elements_text(CAST(${h.codec.json(local?.deviceIds ?? [])} AS jsonb))
          AS device_id),
      created AS (
        INSERT INTO device_commands (command_id, device_id, command_type, payload, status,
          max_retries, broadcast_id, batch_sequence, created_by, expires_at, command_version,
          created_at, delivered_at)
        SELECT gen_random_uuid(), p.device_id, ${launch.commandType},
          ${h.codec.json(launch.payload)}::jsonb, s.status, ${launch.maxRetries}, ${id}::uuid,
          ${launch.phase}, ${launch.createdBy},
          ${launch.expiresAt ? h.codec.time(launch.expiresAt) : null}::timestamptz,
          ${launch.commandVersion ?? null}, ${at}::timestamptz,
          CASE WHEN s.status = 'DELIVERED' THEN ${at}::timestamptz END
        FROM picked AS p
        CROSS JOIN LATERAL (
          -- delivered at once only behind no PENDING command: a device gets its commands in order
          SELECT CASE WHEN p.device_id IN (SELECT device_id FROM here) AND NOT EXISTS (
              SELECT 1 FROM device_commands AS c
              WHERE c.device_id = p.device_id AND c.status = 'PENDING')
            THEN 'DELIVERED' ELSE 'PENDING' END AS status
        ) AS s
        RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(c)))}),
      audited AS (
        INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
          broadcast_id, details, source_ip, created_at)
        SELECT 'COMMAND_CREATED', ${actor.actor}, ${actor.role}, device_id, command_id,
          ${id}::uuid, ${details}::jsonb, ${actor.sourceIp ?? null}, ${at}::timestamptz
        FROM created
        UNION ALL
        -- as a delivery by the device's session records it: without the broadcast's id
        SELECT 'COMMAND_DELIVERED', ${deliverer?.actor ?? null}, ${deliverer?.role ?? null},
          device_id, command_id, NULL,
          jsonb_build_object('via', 'websocket', 'retry_count', 0),
          ${deliverer?.sourceIp ?? null}, ${at}::timestamptz
        FROM created WHERE status = 'DELIVERED')
      -- a PENDING command's columns are not needed: its device id is
      SELECT ${sql.join(
        COMMAND_COLUMNS.map((c) =>
          c === 'device_id' || c === 'status'
            ? sql.ref(c)
            : sql`CASE WHEN status = 'DELIVERED' THEN ${sql.ref(c)} END AS ${sql.ref(c)}`,
        ),
      )}
      FROM created`.execute(h.db);
    const delivered: CommandRecord[] = [];
    for (const row of result.rows)
      if (row.status === 'DELIVERED') delivered.push(rowToCommand(h.codec, row));
    return { devices: result.rows.map((r) => r.device_id), delivered };
  } catch (error) {
    throw translateDriverError(error, `launch phase ${launch.phase} of broadcast ${id}`);
  }
}
