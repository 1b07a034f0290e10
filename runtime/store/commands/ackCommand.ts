/**
 * A device's acknowledgement of a command: EXECUTED or FAILED, with an optional result and
 * error. Idempotent: repeating the ack that finished a command changes nothing and reports
 * `repeated`; an ack that disagrees with how the command finished (another status, result
 * or error — including a command the gateway already failed for expiry or retries) is a
 * `conflict`. An ack for a command that went back to PENDING after an ack timeout counts:
 * the device did run it. Row-locked, audited in the same transaction. Cloud tier only.
 *
 * The common case is one statement (one round trip, committed on its own): it locks the
 * command, and — when it is the device's, still open, and no webhook registration subscribes
 * to the finishing event — updates it and appends the audit row. Otherwise it changes nothing
 * and the ack is settled in a transaction (a repeat or conflict needs only what the statement
 * returned; a subscribed event is enqueued with its audit row, webhooks/emitCommandEvents.ts).
 */
import { sql } from 'kysely';
import { canonicalJson } from '../../definition/hash.js';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import {
  COMMAND_COLUMNS,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/** What a device reports. */
export interface CommandAck {
  deviceId: string;
  commandId: string;
  status: 'EXECUTED' | 'FAILED';
  result?: unknown;
  error?: string;
}

/** The outcome of an ack. */
export type AckOutcome =
  | { kind: 'acked'; command: CommandRecord }
  | { kind: 'repeated'; command: CommandRecord }
  | { kind: 'conflict'; command: CommandRecord }
  | { kind: 'not_found' };

/** The webhook kind of a finishing ack (webhooks/emitCommandEvents.ts). */
const kindOf = (status: CommandAck['status']) =>
  status === 'EXECUTED' ? 'command.executed' : 'command.failed';

/**
 * The outcome of an ack on `current` when it does not change it: not found (another device's
 * command is as unknown as a missing one), a repeat, or a conflict; undefined while open.
 */
function settled(
  current: CommandRecord,
  ack: CommandAck,
  result: unknown,
  error: string | null,
): AckOutcome | undefined {
  if (current.deviceId !== ack.deviceId) return { kind: 'not_found' };
  if (current.status === 'PENDING' || current.status === 'DELIVERED') return undefined;
  const same =
    current.status === ack.status &&
    current.error === error &&
    canonicalJson(current.result) === canonicalJson(result);
  return { kind: same ? 'repeated' : 'conflict', command: current };
}

/** The one statement of the common case; undefined when the command does not exist. */
async function ackInOneStatement(
  store: Store,
  ack: CommandAck,
  actor: CommandActor,
  now: Date,
): Promise<{ before: CommandRecord; after?: CommandRecord } | undefined> {
  const result = ack.result === undefined ? null : store.codec.json(ack.result);
  const at = store.codec.time(now);
  const parameters: unknown[] = [
    JSON.stringify([kindOf(ack.status)]),
    ack.commandId,
    ack.status,
    result,
    ack.error ?? null,
    at,
    ack.deviceId,
    ack.status === 'EXECUTED' ? 'COMMAND_EXECUTED' : 'COMMAND_FAILED',
    actor.actor,
    actor.role,
    actor.sourceIp ?? null,
  ];
  const p = (i: number) => parameters[i];
  const cols = (alias: string) => sql.join(COMMAND_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));
  const { rows } = await executeCached(store, 'ackCommand', parameters, () => ({
    compile: () =>
      sql<{ before: CommandRow; after: CommandRow | null }>`
        WITH subscribed AS (
          SELECT 1 FROM webhook_registrations AS r
          WHERE r.active AND r.event_types @> CAST(${p(0)} AS jsonb)
          LIMIT 1
        ),
        cur AS (
          SELECT ${cols('c')} FROM device_commands AS c
          WHERE c.command_id = ${p(1)}::uuid
          FOR UPDATE
        ),
        upd AS (
          UPDATE device_commands AS d
          SET status = ${p(2)}, result = CAST(${p(3)} AS jsonb), error = ${p(4)},
            executed_at = ${p(5)}::timestamptz
          FROM cur
          WHERE d.command_id = cur.command_id AND cur.device_id = ${p(6)}
            AND cur.status IN ('PENDING', 'DELIVERED') AND NOT EXISTS (SELECT 1 FROM subscribed)
          RETURNING ${cols('d')}
        ),
        audit AS (
          INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
            details, source_ip, created_at)
          SELECT ${p(7)}, ${p(8)}, ${p(9)}, upd.device_id, upd.command_id,
            jsonb_strip_nulls(jsonb_build_object('previous_status', cur.status,
              'retry_count', cur.retry_count, 'error', upd.error)),
            ${p(10)}, upd.executed_at
          FROM upd JOIN cur ON cur.command_id = upd.command_id
        )
        SELECT to_jsonb(cur) AS before, (SELECT to_jsonb(upd) FROM upd) AS after FROM cur`.compile(
        store.db,
      ),
  }));
  const [row] = rows;
  if (!row) return undefined;
  const decode = (value: unknown) =>
    rowToCommand(store.codec, store.codec.parseJson(value) as CommandRow);
  return {
    before: decode(row.before),
    ...(row.after ? { after: decode(row.after) } : {}),
  };
}

/** Record `ack` (see the module comment). */
export async function ackCommand(
  store: Store,
  ack: CommandAck,
  actor: CommandActor,
  now: Date,
): Promise<AckOutcome> {
  try {
    const quick = await ackInOneStatement(store, ack, actor, now);
    if (!quick) return { kind: 'not_found' };
    if (quick.after) return { kind: 'acked', command: quick.after };
    const done = settled(
      quick.before,
      ack,
      ack.result === undefined ? null : ack.result,
      ack.error ?? null,
    );
    if (done) return done;
    return await store.transaction(async (tx): Promise<AckOutcome> => {
      const row = await tx.db
        .selectFrom('device_commands')
        .select(COMMAND_COLUMNS)
        .where('command_id', '=', ack.commandId)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return { kind: 'not_found' };
      const current = rowToCommand(tx.codec, row);
      const result = ack.result === undefined ? null : ack.result;
      const error = ack.error ?? null;
      const done = settled(current, ack, result, error);
      if (done) return done;
      const updated = await tx.db
        .updateTable('device_commands')
        .set({
          status: ack.status,
          result: result === null ? null : tx.codec.json(result),
          error,
          executed_at: tx.codec.time(now),
        })
        .where('command_id', '=', ack.commandId)
        .returning(COMMAND_COLUMNS)
        .executeTakeFirstOrThrow();
      await appendCommandAudit(
        tx,
        actor,
        [
          {
            event: ack.status === 'EXECUTED' ? 'COMMAND_EXECUTED' : 'COMMAND_FAILED',
            deviceId: ack.deviceId,
            commandId: ack.commandId,
            details: {
              previous_status: current.status,
              retry_count: current.retryCount,
              ...(error !== null ? { error } : {}),
            },
          },
        ],
        now,
      );
      return { kind: 'acked', command: rowToCommand(tx.codec, updated) };
    });
  } catch (error) {
    throw translateDriverError(error, `ack command ${ack.commandId}`);
  }
}
