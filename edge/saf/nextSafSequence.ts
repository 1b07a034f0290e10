/**
 * Taking the next per-device sequence number of a store-and-forward record. The number is
 * kept in `edge_sync_state` (`saf_last_sequence`) and moved forward in the caller's
 * transaction — the one that inserts the record — so a rolled-back commit gives its number
 * back and a committed one never hands it out again. Deriving it from `MAX(sequence_number)`
 * alone would reuse numbers once synced records are pruned, and the cloud would answer
 * SEQUENCE_CONFLICT; the maximum is still consulted, so a lost state row cannot take the
 * counter backwards either.
 */
import { executeCached, translateDriverError, type EdgeHandle } from '../../runtime/index.js';
import { readSyncState, SYNC_STATE_KEYS, writeSyncState } from '../state/syncState.js';

/** Take the next sequence number inside transaction `tx` (1 for the first record). */
export async function nextSafSequence(tx: EdgeHandle, now: Date): Promise<number> {
  const stored = await readSyncState(tx, SYNC_STATE_KEYS.safLastSequence);
  const last =
    typeof stored?.value === 'number' && Number.isSafeInteger(stored.value) && stored.value > 0
      ? stored.value
      : 0;
  let highest: number;
  try {
    const [row] = (
      await executeCached(tx, 'highestSafSequence', [], () =>
        tx.edge
          .selectFrom('saf_pending_transactions')
          .select((eb) => eb.fn.max('sequence_number').as('highest')),
      )
    ).rows;
    highest = row?.highest == null ? 0 : tx.codec.parseInt(row.highest);
  } catch (error) {
    throw translateDriverError(error, 'read the highest SAF sequence number');
  }
  const next = Math.max(last, highest) + 1;
  await writeSyncState(tx, SYNC_STATE_KEYS.safLastSequence, next, now);
  return next;
}
