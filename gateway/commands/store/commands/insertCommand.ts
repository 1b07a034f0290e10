/**
 * Creating commands: the device row read with a share lock (so it cannot be deleted under the
 * new command), the command, its audit row and (PostgreSQL) the NOTIFY for the gateways — in
 * one statement, for one command or for a group of them (concurrent `POST …/commands` are
 * created together, gateway/link/commandGroups.ts). The commands travel as one JSON array,
 * so the statement's text is the same for any group size. A command has no webhook event
 * when it is created. Cloud tier only.
 */
import { sql } from 'kysely';
import {
  executeCached,
  translateDriverError,
  COMMANDS_CHANNEL,
} from '../../../../runtime/index.js';
import type { CloudStore, CloudHandle } from '../../../../runtime/index.js';
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
  store: CloudStore,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
): Promise<CommandRecord | undefined> {
  return insertCommandWith(store, command, actor, origin, now);
}

/** A command to create, who creates it, and who delivers it at once (if anyone). */
export interface CommandCreation {
  command: NewCommand;
  actor: CommandActor;
  /**
   * The gateway holding the device's idle socket: the command is created DELIVERED over the
   * websocket at once, with its COMMAND_DELIVERED audit row as well and no NOTIFY — unless
   * another command of the device is still PENDING, which goes first: then it is created
   * PENDING as usual (the caller wakes the device's session).
   */
  deliverer?: CommandActor;
}

/**
 * Create `creations` in one statement, also inside the caller's transaction (see the module
 * comment); `origin` names the gateway creating them in the NOTIFY. Returns each one's
 * command, or undefined when its device does not exist. Commands of one device in one group
 * are not ordered against each other: give a device one command per group.
 */
export async function insertCommands(
  h: CloudHandle,
  creations: readonly CommandCreation[],
  origin: string,
  now: Date,
): Promise<(CommandRecord | undefined)[]> {
  const notify = h.dialect === 'postgres';
  const rows = creations.map(({ command, actor, deliverer }, ord) => ({
    ord,
    command_id: command.commandId,
    device_id: command.deviceId,
    command_type: command.commandType,
    payload: h.codec.json(command.payload),
    max_retries: command.maxRetries,
    command_version: command.commandVersion ?? null,
    expires_at: command.expiresAt ? h.codec.time(command.expiresAt) : null,
    details: h.codec.json({
      command_type: command.commandType,
      max_retries: command.maxRetries,
      expires_at: command.expiresAt?.toISOString() ?? null,
      ...(command.commandVersion ? { command_version: command.commandVersion } : {}),
    }),
    actor: actor.actor,
    actor_role: actor.role,
    source_ip: actor.sourceIp ?? null,
    deliverer: deliverer?.actor ?? null,
    deliverer_role: deliverer?.role ?? null,
    deliverer_ip: deliverer?.sourceIp ?? null,
  }));
  const parameters: unknown[] = [JSON.stringify(rows), h.codec.time(now)];
  if (notify) parameters.push(COMMANDS_CHANNEL, `${origin}|`);
  const p = (i: number) => parameters[i];
  try {
    const { rows: created } = await executeCached(
      h,
      `insertCommands:${notify ? 'notify' : 'quiet'}`,
      parameters,
      () => ({
        compile: () =>
          sql<CommandRow & { ord: number }>`
            WITH input AS (
              SELECT * FROM jsonb_to_recordset(CAST(${p(0)} AS jsonb)) AS i(ord int,
                command_id uuid, device_id text, command_type text, payload text,
                max_retries int, command_version text, expires_at timestamptz, details text,
                actor text, actor_role text, source_ip text, deliverer text,
                deliverer_role text, deliverer_ip text)
            ),
            device AS (
              -- = ANY (ARRAY(…)), not IN (SELECT …): the planner takes the array for a few
              -- elements where it takes the recordset for 100 rows, so it looks each row up by key
              -- instead of scanning the whole table
              SELECT device_id FROM edge_devices
              WHERE device_id = ANY (ARRAY(SELECT device_id FROM input))
              ORDER BY device_id
              FOR SHARE
            ),
            created AS (
              INSERT INTO device_commands (command_id, device_id, command_type, payload, status,
                max_retries, command_version, created_by, expires_at, created_at, delivered_at)
              SELECT i.command_id, device.device_id, i.command_type, CAST(i.payload AS jsonb),
                s.status, i.max_retries, i.command_version, i.actor, i.expires_at, s.at,
                CASE WHEN s.status = 'DELIVERED' THEN s.at END
              FROM input AS i JOIN device ON device.device_id = i.device_id
              CROSS JOIN LATERAL (
                SELECT CASE WHEN i.deliverer IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM device_commands AS c
                    WHERE c.device_id = i.device_id AND c.status = 'PENDING')
                  THEN 'DELIVERED' ELSE 'PENDING' END AS status,
                  ${p(1)}::timestamptz AS at
              ) AS s
              ORDER BY i.ord
              RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(c)))}
            ),
            audit AS (
              -- each command's creation, then its delivery when it is delivered at once
              INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
                details, source_ip, created_at)
              SELECT a.event_type, a.actor, a.actor_role, a.device_id, a.command_id, a.details,
                a.source_ip, a.created_at
              FROM (
                SELECT i.ord, 1 AS step, 'COMMAND_CREATED' AS event_type, i.actor,
                  i.actor_role, c.device_id, c.command_id, CAST(i.details AS jsonb) AS details,
                  i.source_ip, c.created_at
                FROM created AS c JOIN input AS i ON i.command_id = c.command_id
                UNION ALL
                SELECT i.ord, 2, 'COMMAND_DELIVERED', i.deliverer, i.deliverer_role,
                  c.device_id, c.command_id,
                  jsonb_build_object('via', 'websocket', 'retry_count', 0), i.deliverer_ip,
                  c.delivered_at
                FROM created AS c JOIN input AS i ON i.command_id = c.command_id
                WHERE c.status = 'DELIVERED'
              ) AS a
              ORDER BY a.ord, a.step
            )${
              notify
                ? sql`,
            notified AS (
              -- the devices of commands made deliverable for any gateway (not those a local
              -- deliverer took, or left PENDING behind another: it wakes its own session)
              SELECT pg_notify(${p(2)},
                current_schema() || '|' || ${p(3)} || string_agg(DISTINCT c.device_id, ','))
              FROM created AS c JOIN input AS i ON i.command_id = c.command_id
              WHERE i.deliverer IS NULL
              HAVING count(*) > 0
            )
            SELECT c.*, i.ord, (SELECT count(*) FROM notified) AS notified
            FROM created AS c JOIN input AS i ON i.command_id = c.command_id`
                : sql`
            SELECT c.*, i.ord FROM created AS c JOIN input AS i ON i.command_id = c.command_id`
            }`.compile(h.db),
      }),
    );
    const result: (CommandRecord | undefined)[] = creations.map(() => undefined);
    for (const row of created) result[Number(row.ord)] = rowToCommand(h.codec, row);
    return result;
  } catch (error) {
    throw translateDriverError(
      error,
      creations.length === 1
        ? `create command for device ${creations[0]!.command.deviceId}`
        : `create ${creations.length} commands`,
    );
  }
}

/**
 * {@link insertCommand}, also inside the caller's transaction (a command released by its
 * approval commits with the approval's decision), and with an optional `deliverer`
 * ({@link CommandCreation}). Undefined when the device does not exist.
 */
export async function insertCommandWith(
  h: CloudHandle,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
  deliverer?: CommandActor,
): Promise<CommandRecord | undefined> {
  const [created] = await insertCommands(
    h,
    [{ command, actor, ...(deliverer ? { deliverer } : {}) }],
    origin,
    now,
  );
  return created;
}
