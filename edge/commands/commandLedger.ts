/**
 * The device's ledger of commands it has run, in `edge_sync_state` under
 * `command:<command_id>` (no schema change: the edge schema has no migrations). This is
 * what makes a command run once although the cloud may deliver it several times (a push on
 * reconnect, a retry after a lost ack, a poll racing a push):
 *
 * 1. before a handler runs, the command is recorded RUNNING;
 * 2. its outcome (status, result, error) is recorded DONE before any ack is sent;
 * 3. once the cloud confirms the ack, `acked_at` is set.
 *
 * A redelivered DONE command is acked again with the stored outcome, so every ack of a
 * command id carries the same status and result (the cloud treats an identical repeat as
 * harmless and a different one as a conflict). A RUNNING command found at redelivery was cut
 * short by a crash or a stop: it is finished as FAILED (COMMAND_INTERRUPTED) rather than run
 * again, since a half-run REBOOT or config swap is not safe to repeat blindly. DONE records
 * whose ack never got through are sent again on reconnect. Old records are pruned after the
 * retention period (the cloud gives up on a command long before).
 */
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';
import { COMMAND_KEY_PREFIX, readSyncState, writeSyncState } from '../state/syncState.js';

/** What the device reports for a command. */
export interface CommandAck {
  commandId: string;
  status: 'EXECUTED' | 'FAILED';
  result?: unknown;
  error?: string;
}

/** A ledger entry, as stored (JSON). */
export interface CommandLedgerEntry {
  command_type: string;
  state: 'RUNNING' | 'DONE';
  status?: 'EXECUTED' | 'FAILED';
  result?: unknown;
  error?: string;
  started_at: string;
  finished_at?: string;
  acked_at?: string | null;
}

const keyOf = (commandId: string) => `${COMMAND_KEY_PREFIX}${commandId}`;

/** The ledger entry of `commandId`, if the device has seen it. */
export async function readCommandEntry(
  h: EdgeHandle,
  commandId: string,
): Promise<CommandLedgerEntry | undefined> {
  return (await readSyncState(h, keyOf(commandId)))?.value as CommandLedgerEntry | undefined;
}

/** Record that `commandId` starts running. */
export function recordCommandStarted(
  h: EdgeHandle,
  commandId: string,
  commandType: string,
  now: Date,
): Promise<void> {
  const entry: CommandLedgerEntry = {
    command_type: commandType,
    state: 'RUNNING',
    started_at: now.toISOString(),
  };
  return writeSyncState(h, keyOf(commandId), entry, now);
}

/** Record the outcome of `ack.commandId` (not acked yet). Returns the entry written. */
export async function recordCommandFinished(
  h: EdgeHandle,
  ack: CommandAck,
  commandType: string,
  startedAt: Date,
  now: Date,
): Promise<CommandLedgerEntry> {
  const entry: CommandLedgerEntry = {
    command_type: commandType,
    state: 'DONE',
    status: ack.status,
    ...(ack.result !== undefined ? { result: ack.result } : {}),
    ...(ack.error !== undefined ? { error: ack.error } : {}),
    started_at: startedAt.toISOString(),
    finished_at: now.toISOString(),
    acked_at: null,
  };
  await writeSyncState(h, keyOf(ack.commandId), entry, now);
  return entry;
}

/** The ack a DONE entry stands for. */
export function ackOf(commandId: string, entry: CommandLedgerEntry): CommandAck {
  return {
    commandId,
    status: entry.status ?? 'FAILED',
    ...(entry.result !== undefined ? { result: entry.result } : {}),
    ...(entry.error !== undefined ? { error: entry.error } : {}),
  };
}

/** Record that the cloud has the ack of `commandId` (or refused it for good). */
export async function markCommandAcked(h: EdgeHandle, commandId: string, now: Date): Promise<void> {
  const entry = await readCommandEntry(h, commandId);
  if (!entry || entry.state !== 'DONE' || entry.acked_at) return;
  await writeSyncState(h, keyOf(commandId), { ...entry, acked_at: now.toISOString() }, now);
}

/** DONE commands whose ack the cloud has not confirmed, oldest first. */
export async function listUnackedCommands(h: EdgeHandle): Promise<CommandAck[]> {
  try {
    const rows = await h.edge
      .selectFrom('edge_sync_state')
      .select(['key', 'value'])
      .where('key', 'like', `${COMMAND_KEY_PREFIX}%`)
      .orderBy('updated_at')
      .execute();
    return rows.flatMap((row) => {
      const entry = h.codec.parseJson(row.value) as CommandLedgerEntry;
      return entry.state === 'DONE' && !entry.acked_at
        ? [ackOf(row.key.slice(COMMAND_KEY_PREFIX.length), entry)]
        : [];
    });
  } catch (error) {
    throw translateDriverError(error, 'list unacked commands');
  }
}

/** Delete ledger entries last written before `before`; returns how many. */
export async function pruneCommandEntries(h: EdgeHandle, before: Date): Promise<number> {
  try {
    const result = await h.edge
      .deleteFrom('edge_sync_state')
      .where('key', 'like', `${COMMAND_KEY_PREFIX}%`)
      .where('updated_at', '<', h.codec.time(before))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  } catch (error) {
    throw translateDriverError(error, 'prune the command ledger');
  }
}
