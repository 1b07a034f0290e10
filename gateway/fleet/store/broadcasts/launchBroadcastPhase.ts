/**
 * Start one rollout phase of a broadcast: pick up to `limit` matching devices that have no
 * command of this broadcast yet, in a deterministic order — md5(broadcast id : device id),
 * so every phase (and a retry of one) picks the same devices and the sample is spread
 * across the fleet instead of following device names — and create their PENDING commands
 * and COMMAND_CREATED audit rows, all in one statement (data-modifying CTEs), however many
 * devices there are. Devices are key-share locked while picked, so one deleted meanwhile
 * cannot break the insert. Call inside the transaction that saves the actor. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
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
}

/** Create the phase's commands; returns the devices that got one. */
export async function launchBroadcastPhase(
  h: CloudHandle,
  launch: BroadcastPhaseLaunch,
  actor: CommandActor,
  now: Date,
): Promise<string[]> {
  if (launch.limit !== null && launch.limit <= 0) return [];
  const id = launch.broadcastId;
  const at = h.codec.time(now);
  const details = h.codec.json({
    command_type: launch.commandType,
    max_retries: launch.maxRetries,
    expires_at: launch.expiresAt?.toISOString() ?? null,
    phase: launch.phase,
    ...(launch.commandVersion ? { command_version: launch.commandVersion } : {}),
  });
  try {
    const result = await sql<{ device_id: string }>`
      WITH picked AS (
        SELECT d.device_id FROM edge_devices d
        WHERE ${deviceFilterCondition(h.codec, launch.filter)}
          AND NOT EXISTS (SELECT 1 FROM device_commands c
                          WHERE c.broadcast_id = ${id}::uuid AND c.device_id = d.device_id)
        ORDER BY md5(${id} || ':' || d.device_id), d.device_id
        ${launch.limit === null ? sql`` : sql`LIMIT ${launch.limit}`}
        FOR KEY SHARE OF d),
      created AS (
        INSERT INTO device_commands (command_id, device_id, command_type, payload, status,
          max_retries, broadcast_id, batch_sequence, created_by, expires_at, command_version,
          created_at)
        SELECT gen_random_uuid(), device_id, ${launch.commandType},
          ${h.codec.json(launch.payload)}::jsonb, 'PENDING', ${launch.maxRetries}, ${id}::uuid,
          ${launch.phase}, ${launch.createdBy},
          ${launch.expiresAt ? h.codec.time(launch.expiresAt) : null}::timestamptz,
          ${launch.commandVersion ?? null}, ${at}::timestamptz
        FROM picked
        RETURNING command_id, device_id),
      audited AS (
        INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
          broadcast_id, details, source_ip, created_at)
        SELECT 'COMMAND_CREATED', ${actor.actor}, ${actor.role}, device_id, command_id,
          ${id}::uuid, ${details}::jsonb, ${actor.sourceIp ?? null}, ${at}::timestamptz
        FROM created)
      SELECT device_id FROM created`.execute(h.db);
    return result.rows.map((r) => r.device_id);
  } catch (error) {
    throw translateDriverError(error, `launch phase ${launch.phase} of broadcast ${id}`);
  }
}
