/**
 * The store-and-forward backlog: what the device holds that the cloud has not accepted yet
 * (PENDING records). REJECTED records are not counted — they will never be uploaded and are
 * an operator's to look at — nor SYNCED ones. The count and sums come from the totals the
 * edge database's triggers keep (runtime/store/sqlite/safBacklogTotals.ts), the oldest time
 * from the first entry of the (status, created_at) index: no pass over the records.
 */
import { sql } from 'kysely';
import { executeCached, translateDriverError, type EdgeHandle } from '../../runtime/index.js';
import { readSyncState, SYNC_STATE_KEYS } from '../state/syncState.js';

/** The PENDING records in figures. */
export interface SafBacklog {
  count: number;
  /** Sum of `amount_minor` (records without an amount count 0). */
  amountMinor: number;
  /** Sum of the absolute amounts: the money at risk, refunds included. */
  exposureMinor: number;
  /** When the oldest PENDING record was queued (ISO 8601), or null. */
  oldestCreatedAt: string | null;
}

/** Read the backlog. */
export async function readSafBacklog(h: EdgeHandle): Promise<SafBacklog> {
  const totals = await readTotals(h);
  if (!totals) return sumRecords(h);
  try {
    const [row] = (
      await executeCached(h, 'oldestSafPending', ['PENDING', 1], () =>
        h.edge
          .selectFrom('saf_pending_transactions')
          .select('created_at')
          .where('status', '=', 'PENDING')
          .orderBy('created_at')
          .limit(1),
      )
    ).rows;
    return {
      ...totals,
      oldestCreatedAt: row ? h.codec.parseTime(row.created_at).toISOString() : null,
    };
  } catch (error) {
    throw translateDriverError(error, 'read the oldest SAF record');
  }
}

/** The figures the store's triggers keep (edge databases), if it has them. */
async function readTotals(h: EdgeHandle): Promise<Omit<SafBacklog, 'oldestCreatedAt'> | undefined> {
  const entry = await readSyncState(h, SYNC_STATE_KEYS.safBacklogTotals);
  const value = entry?.value;
  if (!Array.isArray(value) || value.length !== 3 || !value.every(Number.isSafeInteger))
    return undefined;
  const [count, amountMinor, exposureMinor] = value as [number, number, number];
  return { count, amountMinor, exposureMinor };
}

/** The figures summed over the PENDING records (a store without the triggers' row). */
async function sumRecords(h: EdgeHandle): Promise<SafBacklog> {
  try {
    const [row] = (
      await executeCached(h, 'readSafBacklog', ['PENDING'], () =>
        h.edge
          .selectFrom('saf_pending_transactions')
          .select((eb) => [
            eb.fn.countAll<number | string>().as('count'),
            sql<number | string>`COALESCE(SUM(amount_minor), 0)`.as('amount'),
            sql<number | string>`COALESCE(SUM(ABS(amount_minor)), 0)`.as('exposure'),
            eb.fn.min<string | Date | null>('created_at').as('oldest'),
          ])
          .where('status', '=', 'PENDING'),
      )
    ).rows;
    if (!row) throw new Error('the backlog aggregate returned no row');
    return {
      count: h.codec.parseInt(row.count),
      amountMinor: h.codec.parseInt(row.amount),
      exposureMinor: h.codec.parseInt(row.exposure),
      oldestCreatedAt: row.oldest == null ? null : h.codec.parseTime(row.oldest).toISOString(),
    };
  } catch (error) {
    throw translateDriverError(error, 'read the SAF backlog');
  }
}
