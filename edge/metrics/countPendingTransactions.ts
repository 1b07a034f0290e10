import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** How many store-and-forward records wait for upload (`saf_pending_transactions`, PENDING). */
export async function countPendingTransactions(h: EdgeHandle): Promise<number> {
  try {
    const row = await h.edge
      .selectFrom('saf_pending_transactions')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    return h.codec.parseInt(row.count);
  } catch (error) {
    throw translateDriverError(error, 'count pending SAF transactions');
  }
}
