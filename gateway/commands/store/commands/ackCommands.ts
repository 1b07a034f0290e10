/**
 * Devices' acknowledgements of commands: EXECUTED or FAILED, with an optional result and
 * error. Idempotent: repeating the ack that finished a command changes nothing and reports
 * `repeated`; an ack that disagrees with how the command finished (another status, result
 * or error — including a command the gateway already failed for expiry or retries) is a
 * `conflict`. An ack for a command that went back to PENDING after an ack timeout counts:
 * the device did run it. Row-locked, audited in the same transaction. Cloud tier only.
 *
 * Acks come in groups (many devices' acks committed together, gateway/link/commandGroups.ts),
 * so a group costs what one ack costs: one statement, committed on its own, locks the
 * group's commands (in id order, so two groups cannot deadlock) and — for each ack that is
 * its device's, still open, and whose finishing event no webhook registration subscribes
 * to — updates the command and appends its audit row. Whatever it left open is settled in
 * one transaction for the whole group (a subscribed event is enqueued with its audit row,
 * webhooks/emitCommandEvents.ts); repeats and conflicts need only what the statement
 * returned. The rows travel as one JSON array, so the statement's text is the same for any
 * group size. Each ack gets its own outcome: an unknown command is `not_found` for that ack
 * alone.
 */
import { sql } from 'kysely';
import { canonicalJson, executeCached, translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
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

/** One ack of a group: what the device reported, who reported it, and when. */
export interface AckRequest {
  ack: CommandAck;
  actor: CommandActor;
  now: Date;
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

const resultOf = (ack: CommandAck): unknown => (ack.result === undefined ? null : ack.result);

/**
 * The outcome of an ack on `current` when it does not change it: not found (another device's
 * command is as unknown as a missing one), a repeat, or a conflict; undefined while open.
 */
function settled(current: CommandRecord, ack: CommandAck): AckOutcome | undefined {
  if (current.deviceId !== ack.deviceId) return { kind: 'not_found' };
  if (current.status === 'PENDING' || current.status === 'DELIVERED') return undefined;
  const same =
    current.status === ack.status &&
    current.error === (ack.error ?? null) &&
    canonicalJson(current.result) === canonicalJson(resultOf(ack));
  return { kind: same ? 'repeated' : 'conflict', command: current };
}

const cols = (alias: string) => sql.join(COMMAND_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));

/** What the group statement saw of each ack: the command before, and after if it changed it. */
interface Seen {
  before?: CommandRecord;
  after?: CommandRecord;
}

/** The one statement of the common case, for acks of distinct commands. */
async function ackInOneStatement(
  store: CloudStore,
  requests: readonly AckRequest[],
): Promise<Seen[]> {
  const rows = requests.map(({ ack, actor, now }, ord) => ({
    ord,
    command_id: ack.commandId,
    device_id: ack.deviceId,
    status: ack.status,
    result: ack.result === undefined ? null : store.codec.json(ack.result),
    error: ack.error ?? null,
    executed_at: store.codec.time(now),
    kind: kindOf(ack.status),
    event_type: ack.status === 'EXECUTED' ? 'COMMAND_EXECUTED' : 'COMMAND_FAILED',
    actor: actor.actor,
    actor_role: actor.role,
    source_ip: actor.sourceIp ?? null,
  }));
  const parameters: unknown[] = [JSON.stringify(rows)];
  const { rows: seen } = await executeCached(store, 'ackCommands', parameters, () => ({
    compile: () =>
      sql<{ ord: number; before: CommandRow | null; after: CommandRow | null }>`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(CAST(${parameters[0]} AS jsonb)) AS i(ord int,
            command_id uuid, device_id text, status text, result text, error text,
            executed_at timestamptz, kind text, event_type text, actor text, actor_role text,
            source_ip text)
        ),
        subscribed AS (
          SELECT k.kind FROM (SELECT DISTINCT kind FROM input) AS k
          WHERE EXISTS (SELECT 1 FROM webhook_registrations AS r
            WHERE r.active AND r.event_types @> jsonb_build_array(k.kind))
        ),
        cur AS (
          -- = ANY (ARRAY(…)), not IN (SELECT …): the planner takes the array for a few
          -- elements where it takes the recordset for 100 rows, so it looks each row up by key
          -- instead of scanning the whole table
          SELECT ${cols('c')} FROM device_commands AS c
          WHERE c.command_id = ANY (ARRAY(SELECT command_id FROM input))
          ORDER BY c.command_id
          FOR UPDATE
        ),
        upd AS (
          UPDATE device_commands AS d
          SET status = i.status, result = CAST(i.result AS jsonb), error = i.error,
            executed_at = i.executed_at
          FROM input AS i JOIN cur ON cur.command_id = i.command_id
          WHERE d.command_id = i.command_id AND cur.device_id = i.device_id
            AND cur.status IN ('PENDING', 'DELIVERED')
            AND i.kind NOT IN (SELECT kind FROM subscribed)
          RETURNING ${cols('d')}
        ),
        audit AS (
          INSERT INTO command_audit_log (event_type, actor, actor_role, device_id, command_id,
            details, source_ip, created_at)
          SELECT i.event_type, i.actor, i.actor_role, upd.device_id, upd.command_id,
            jsonb_strip_nulls(jsonb_build_object('previous_status', cur.status,
              'retry_count', cur.retry_count, 'error', upd.error)),
            i.source_ip, upd.executed_at
          FROM upd JOIN cur ON cur.command_id = upd.command_id
            JOIN input AS i ON i.command_id = upd.command_id
          ORDER BY i.ord
        )
        SELECT i.ord, to_jsonb(cur) AS before, to_jsonb(upd) AS after
        FROM input AS i
          LEFT JOIN cur ON cur.command_id = i.command_id
          LEFT JOIN upd ON upd.command_id = i.command_id`.compile(store.db),
  }));
  const decode = (value: unknown) =>
    rowToCommand(store.codec, store.codec.parseJson(value) as CommandRow);
  const result: Seen[] = requests.map(() => ({}));
  for (const row of seen)
    result[Number(row.ord)] = {
      ...(row.before ? { before: decode(row.before) } : {}),
      ...(row.after ? { after: decode(row.after) } : {}),
    };
  return result;
}

/**
 * Settle, in one transaction, the acks the statement left open (their finishing event has a
 * webhook subscriber): lock the commands, update the ones still open, append their audit rows
 * with the events they enqueue. One statement per kind, whatever the number of acks.
 */
async function ackInTransaction(
  store: CloudStore,
  requests: readonly AckRequest[],
): Promise<AckOutcome[]> {
  return store.transaction(async (tx) => {
    const locked = await tx.cloud
      .selectFrom('device_commands')
      .select(COMMAND_COLUMNS)
      .where(
        'command_id',
        'in',
        requests.map((r) => r.ack.commandId),
      )
      .orderBy('command_id')
      .forUpdate()
      .execute();
    const current = new Map(locked.map((row) => [row.command_id, rowToCommand(tx.codec, row)]));
    const outcomes: (AckOutcome | undefined)[] = requests.map(({ ack }) => {
      const command = current.get(ack.commandId);
      return command ? settled(command, ack) : { kind: 'not_found' };
    });
    const open = requests.filter((_, i) => outcomes[i] === undefined);
    if (open.length === 0) return outcomes as AckOutcome[];
    const rows = open.map(({ ack, now }) => ({
      command_id: ack.commandId,
      status: ack.status,
      result: ack.result === undefined ? null : tx.codec.json(ack.result),
      error: ack.error ?? null,
      executed_at: tx.codec.time(now),
    }));
    const updated = await sql<CommandRow>`
      UPDATE device_commands AS d
      SET status = i.status, result = CAST(i.result AS jsonb), error = i.error,
        executed_at = i.executed_at
      FROM jsonb_to_recordset(CAST(${JSON.stringify(rows)} AS jsonb)) AS i(command_id uuid,
        status text, result text, error text, executed_at timestamptz)
      WHERE d.command_id = i.command_id
      RETURNING ${cols('d')}`.execute(tx.db);
    const after = new Map(updated.rows.map((row) => [row.command_id, rowToCommand(tx.codec, row)]));
    await appendCommandAudit(
      tx,
      open[0]!.actor,
      open.map(({ ack, actor }) => {
        const before = current.get(ack.commandId)!;
        return {
          event: ack.status === 'EXECUTED' ? 'COMMAND_EXECUTED' : 'COMMAND_FAILED',
          actor,
          deviceId: ack.deviceId,
          commandId: ack.commandId,
          details: {
            previous_status: before.status,
            retry_count: before.retryCount,
            ...(ack.error !== undefined ? { error: ack.error } : {}),
          },
        };
      }),
      // one time for the group's audit rows, as the statement's; each command keeps its own
      open.at(-1)!.now,
    );
    return requests.map(({ ack }, i) => {
      const outcome = outcomes[i];
      if (outcome) return outcome;
      const command = after.get(ack.commandId);
      if (!command) throw new Error(`ack command ${ack.commandId}: the locked row was not updated`);
      return { kind: 'acked', command };
    });
  });
}

/** One round of {@link ackCommands}: acks of distinct commands. */
async function ackDistinct(
  store: CloudStore,
  requests: readonly AckRequest[],
): Promise<AckOutcome[]> {
  const seen = await ackInOneStatement(store, requests);
  const outcomes: (AckOutcome | undefined)[] = requests.map(({ ack }, i) => {
    const { before, after } = seen[i]!;
    if (!before) return { kind: 'not_found' };
    if (after) return { kind: 'acked', command: after };
    return settled(before, ack);
  });
  const open = requests.flatMap((r, i) => (outcomes[i] === undefined ? [i] : []));
  if (open.length > 0) {
    const done = await ackInTransaction(
      store,
      open.map((i) => requests[i]!),
    );
    open.forEach((i, k) => (outcomes[i] = done[k]));
  }
  return outcomes as AckOutcome[];
}

/**
 * Record a group of acks (see the module comment); returns each one's outcome, in order. Acks
 * of one command in the same group are taken in turn (the later ones see the earlier ones'
 * outcome: a repeat or a conflict). Rejects only when the database fails the whole group.
 */
export async function ackCommands(
  store: CloudStore,
  requests: readonly AckRequest[],
): Promise<AckOutcome[]> {
  const outcomes: AckOutcome[] = new Array<AckOutcome>(requests.length);
  let left = requests.map((request, i) => ({ request, i }));
  try {
    while (left.length > 0) {
      const ids = new Set<string>();
      const round = left.filter(({ request }) => {
        if (ids.has(request.ack.commandId)) return false;
        ids.add(request.ack.commandId);
        return true;
      });
      const taken = new Set(round);
      left = left.filter((entry) => !taken.has(entry));
      const done = await ackDistinct(
        store,
        round.map((r) => r.request),
      );
      round.forEach(({ i }, k) => (outcomes[i] = done[k]!));
    }
  } catch (error) {
    const first = requests[0]?.ack.commandId;
    throw translateDriverError(
      error,
      requests.length === 1 ? `ack command ${first}` : `ack ${requests.length} commands`,
    );
  }
  return outcomes;
}
