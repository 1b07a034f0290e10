/**
 * Resume after a reconnect: commands DELIVERED to a device but not acked (the old connection
 * may have dropped them) are delivered again — `delivered_at` restarts the ack timeout and
 * the redelivery counts as a retry — or, when their retries are used up, FAILED. Oldest
 * first, at most `limit` per call; `exclude` names the ones this session already
 * redelivered, so a resume done in several rounds takes each command once. Expired commands
 * are left to the expiry sweep. FOR UPDATE SKIP LOCKED, audited with the change. Cloud tier
 * only.
 *
 * Many devices resume at once after a gateway restart, so the statement serves a group of
 * devices (gateway/link/commandGroups.ts): one statement with the audit rows, committed on
 * its own — unless a command would FAIL while a webhook registration subscribes to
 * `command.failed`: then it changes nothing, and the group is redone in a transaction that
 * enqueues the events with their audit rows (webhooks/emitCommandEvents.ts).
 */
import { sql } from 'kysely';
import { executeCached, translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore, CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import {
  byCreation,
  COMMAND_COLUMNS,
  MAX_RETRIES_ERROR,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/** One device's share of a group redelivery. */
export interface RedeliveryRequest {
  deviceId: string;
  /** At most this many commands. */
  limit: number;
  /** Commands this session already redelivered. */
  exclude: readonly string[];
}

/** The input rows and the statement's common part: pick, then deliver again or fail. */
function redeliver(h: CloudHandle, requests: readonly RedeliveryRequest[], now: Date) {
  const at = h.codec.time(now);
  const rows = requests.map((r) => ({ device_id: r.deviceId, lim: r.limit, exclude: r.exclude }));
  const parameters: unknown[] = [JSON.stringify(rows), at, at, MAX_RETRIES_ERROR];
  const p = (i: number) => parameters[i];
  // SET expressions read the row as it was, so each CASE sees the old retry_count
  const ctes = sql`
    input AS (
      SELECT * FROM jsonb_to_recordset(CAST(${p(0)} AS jsonb)) AS i(device_id text, lim int,
        exclude jsonb)
    ),
    picked AS (
      SELECT c.command_id, c.retry_count, c.max_retries FROM input AS i CROSS JOIN LATERAL (
        SELECT command_id, retry_count, max_retries FROM device_commands
        WHERE device_id = i.device_id AND status = 'DELIVERED'
          AND (expires_at IS NULL OR expires_at > ${p(1)}::timestamptz)
          AND command_id::text NOT IN (SELECT jsonb_array_elements_text(i.exclude))
        ORDER BY created_at, command_id
        LIMIT i.lim
        FOR UPDATE SKIP LOCKED
      ) AS c
    )`;
  const set = sql`
    status = CASE WHEN d.retry_count < d.max_retries THEN 'DELIVERED' ELSE 'FAILED' END,
    retry_count = CASE WHEN d.retry_count < d.max_retries THEN d.retry_count + 1
      ELSE d.retry_count END,
    delivered_at = CASE WHEN d.retry_count < d.max_retries THEN ${p(2)}::timestamptz
      ELSE d.delivered_at END,
    error = CASE WHEN d.retry_count < d.max_retries THEN d.error ELSE ${p(3)} END`;
  return { parameters, ctes, set };
}

const returned = sql.join(COMMAND_COLUMNS.map((c) => sql.ref(`d.${c}`)));

/** The one statement of the common case; undefined when it left everything for a transaction. */
async function redeliverInOneStatement(
  store: CloudStore,
  requests: readonly RedeliveryRequest[],
  actor: CommandActor,
  now: Date,
): Promise<CommandRecord[] | undefined> {
  const { parameters, ctes, set } = redeliver(store, requests, now);
  // in the order the audit rows' insert names them
  parameters.push(
    actor.actor,
    actor.role,
    MAX_RETRIES_ERROR,
    actor.sourceIp ?? null,
    parameters[1],
  );
  const p = (i: number) => parameters[i];
  const { rows } = await executeCached(store, 'redeliverToDevices', parameters, () => ({
    compile: () =>
      sql<{ blocked: boolean; command: CommandRow | null }>`
        WITH ${ctes},
        blocked AS (
          SELECT 1 FROM webhook_registrations AS r
          WHERE r.active AND r.event_types @> '["command.failed"]'::jsonb
            AND EXISTS (SELECT 1 FROM picked WHERE retry_count >= max_retries)
          LIMIT 1
        ),
        upd AS (
          UPDATE device_commands AS d SET ${set}
          FROM picked WHERE d.command_id = picked.command_id AND NOT EXISTS (SELECT 1 FROM blocked)
          RETURNING ${returned}
        ),
        audit AS (
          INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
            details, source_ip, created_at)
          SELECT CASE WHEN x.status = 'DELIVERED' THEN 'COMMAND_DELIVERED' ELSE 'COMMAND_FAILED' END,
            ${p(4)}, ${p(5)}, x.device_id, x.command_id,
            CASE WHEN x.status = 'DELIVERED'
              THEN jsonb_build_object('via', 'websocket', 'retry_count', x.retry_count,
                'redelivery', 'reconnect')
              ELSE jsonb_build_object('reason', ${p(6)}::text, 'retry_count', x.retry_count) END,
            ${p(7)}, ${p(8)}::timestamptz
          FROM upd AS x
          ORDER BY x.device_id, x.created_at, x.command_id
        )
        SELECT EXISTS (SELECT 1 FROM blocked) AS blocked, to_jsonb(u) AS command
        FROM (SELECT 1) AS one LEFT JOIN upd AS u ON true`.compile(store.db),
  }));
  if (rows.some((r) => r.blocked)) return undefined;
  return rows.flatMap((r) =>
    r.command ? [rowToCommand(store.codec, store.codec.parseJson(r.command) as CommandRow)] : [],
  );
}

/** The group in a transaction, its events enqueued with the audit rows. */
function redeliverInTransaction(
  store: CloudStore,
  requests: readonly RedeliveryRequest[],
  actor: CommandActor,
  now: Date,
): Promise<CommandRecord[]> {
  return store.transaction(async (tx) => {
    const { ctes, set } = redeliver(tx, requests, now);
    const result = await sql<CommandRow>`
      WITH ${ctes}
      UPDATE device_commands AS d SET ${set}
      FROM picked WHERE d.command_id = picked.command_id
      RETURNING ${returned}`.execute(tx.db);
    const commands = result.rows.map((row) => rowToCommand(tx.codec, row)).sort(byCreation);
    await appendCommandAudit(
      tx,
      actor,
      commands.map((c) =>
        c.status === 'DELIVERED'
          ? {
              event: 'COMMAND_DELIVERED' as const,
              deviceId: c.deviceId,
              commandId: c.commandId,
              details: { via: 'websocket', retry_count: c.retryCount, redelivery: 'reconnect' },
            }
          : {
              event: 'COMMAND_FAILED' as const,
              deviceId: c.deviceId,
              commandId: c.commandId,
              details: { reason: MAX_RETRIES_ERROR, retry_count: c.retryCount },
            },
      ),
      now,
    );
    return commands;
  });
}

/**
 * Redeliver the unacked commands of a group of devices (distinct); returns each request's
 * changed commands, oldest first — status DELIVERED (push it again) or FAILED (retries used
 * up).
 */
export async function redeliverToDevices(
  store: CloudStore,
  requests: readonly RedeliveryRequest[],
  actor: CommandActor,
  now: Date,
): Promise<CommandRecord[][]> {
  if (new Set(requests.map((r) => r.deviceId)).size !== requests.length)
    throw new Error('redeliverToDevices: one request per device');
  try {
    const changed =
      (await redeliverInOneStatement(store, requests, actor, now)) ??
      (await redeliverInTransaction(store, requests, actor, now));
    const byDevice = new Map<string, CommandRecord[]>(requests.map((r) => [r.deviceId, []]));
    for (const c of changed) byDevice.get(c.deviceId)?.push(c);
    return requests.map((r) => byDevice.get(r.deviceId)!.sort(byCreation));
  } catch (error) {
    throw translateDriverError(
      error,
      requests.length === 1
        ? `redeliver commands to device ${requests[0]!.deviceId}`
        : `redeliver commands to ${requests.length} devices`,
    );
  }
}
