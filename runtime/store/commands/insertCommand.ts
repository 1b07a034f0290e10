import { sql } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import { COMMANDS_CHANNEL } from '../postgres/commandNotifications.js';
import type { Store, StoreHandle } from '../store.js';
import {
  COMMAND_COLUMNS,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/** A command to create. */
export interface NewCommand {
  commandId: string;
  deviceId: string;
  commandType: string;
  payload: unknown;
  maxRetries: number;
  expiresAt: Date | null;
  /** The command version whose payload schema the payload was checked against, if any. */
  commandVersion?: string | null;
}

/**
 * Create a PENDING command with its COMMAND_CREATED audit row, and notify the gateways
 * (`origin` names the one creating it), atomically. Undefined when the device does not exist.
 */
export async function insertCommand(
  store: Store,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
): Promise<CommandRecord | undefined> {
  return insertCommandWith(store, command, actor, origin, now);
}

/**
 * {@link insertCommand} as one statement, also inside the caller's transaction (a command
 * released by its approval commits with the approval's decision): the device row is read
 * with a share lock (so it cannot be deleted under the new command), then the command, its
 * audit row and (PostgreSQL) the NOTIFY for the gateways. One round trip instead of five;
 * a command has no webhook event when it is created. Undefined when the device does not
 * exist.
 *
 * With `deliverer` (the gateway holding the device's idle socket), the command is created
 * DELIVERED over the websocket at once, with its COMMAND_DELIVERED audit row as well and no
 * NOTIFY — unless another command of the device is still PENDING, which goes first: then
 * it is created PENDING as usual (the caller wakes the device's session).
 */
export async function insertCommandWith(
  h: StoreHandle,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
  deliverer?: CommandActor,
): Promise<CommandRecord | undefined> {
  const at = h.codec.time(now);
  const notify = h.dialect === 'postgres' && !deliverer;
  const details = {
    command_type: command.commandType,
    max_retries: command.maxRetries,
    expires_at: command.expiresAt?.toISOString() ?? null,
    ...(command.commandVersion ? { command_version: command.commandVersion } : {}),
  };
  const parameters: unknown[] = [
    command.deviceId,
    command.commandId,
    command.commandType,
    h.codec.json(command.payload),
    command.maxRetries,
    command.commandVersion ?? null,
    actor.actor,
    command.expiresAt ? h.codec.time(command.expiresAt) : null,
    at,
    actor.actor,
    actor.role,
    h.codec.json(details),
    actor.sourceIp ?? null,
    at,
  ];
  if (notify) parameters.push(COMMANDS_CHANNEL, `${origin}|${command.deviceId}`);
  if (deliverer) parameters.push(deliverer.actor, deliverer.role, deliverer.sourceIp ?? null);
  const p = (i: number) => parameters[i];
  // the status the command is created in, and its audit row when it is delivered at once
  const status = deliverer
    ? sql`CASE WHEN EXISTS (SELECT 1 FROM device_commands AS c
        WHERE c.device_id = device.device_id AND c.status = 'PENDING')
        THEN 'PENDING' ELSE 'DELIVERED' END`
    : sql`'PENDING'`;
  // created first, then delivered: one insert, in that order
  const deliveredAudit = deliverer
    ? sql`
              UNION ALL
              SELECT 2, 'COMMAND_DELIVERED', ${p(14)}, ${p(15)}, created.device_id,
                created.command_id, jsonb_build_object('via', 'websocket', 'retry_count', 0),
                ${p(16)}, created.delivered_at
              FROM created WHERE created.status = 'DELIVERED'`
    : sql``;
  try {
    const { rows } = await executeCached(
      h,
      `insertCommand:${deliverer ? 'deliver' : notify ? 'notify' : 'quiet'}`,
      parameters,
      () => ({
        compile: () =>
          sql<CommandRow>`
            WITH device AS (
              SELECT device_id FROM edge_devices WHERE device_id = ${p(0)} FOR SHARE
            ),
            created AS (
              INSERT INTO device_commands (command_id, device_id, command_type, payload, status,
                max_retries, command_version, created_by, expires_at, created_at, delivered_at)
              SELECT ${p(1)}::uuid, device.device_id, ${p(2)}, ${p(3)}::jsonb, s.status,
                ${p(4)}::int, ${p(5)}, ${p(6)}, ${p(7)}::timestamptz, s.at,
                CASE WHEN s.status = 'DELIVERED' THEN s.at END
              FROM device CROSS JOIN LATERAL
                (SELECT ${status} AS status, ${p(8)}::timestamptz AS at) AS s
              RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(c)))}
            ),
            audit AS (
              INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
                details, source_ip, created_at)
              SELECT a.event_type, a.actor, a.actor_role, a.device_id, a.command_id, a.details,
                a.source_ip, a.created_at
              FROM (
                SELECT 1 AS ord, 'COMMAND_CREATED' AS event_type, ${p(9)} AS actor,
                  ${p(10)} AS actor_role, created.device_id, created.command_id,
                  ${p(11)}::jsonb AS details, ${p(12)} AS source_ip,
                  ${p(13)}::timestamptz AS created_at
                FROM created${deliveredAudit}
              ) AS a
              ORDER BY a.ord
            )${
              notify
                ? sql`,
            notified AS (
              SELECT pg_notify(${p(14)}, current_schema() || '|' || ${p(15)}) FROM created
            )
            SELECT created.*, (SELECT count(*) FROM notified) AS notified FROM created`
                : sql`
            SELECT created.* FROM created`
            }`.compile(h.db),
      }),
    );
    return rows[0] ? rowToCommand(h.codec, rows[0]) : undefined;
  } catch (error) {
    throw translateDriverError(error, `create command for device ${command.deviceId}`);
  }
}
