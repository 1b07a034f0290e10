import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../database.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/**
 * Put tasks whose lease expired back to PENDING (their worker died); returns how many. Rows
 * another transaction holds (a completion locking its group) are skipped, not waited for:
 * a plain bulk UPDATE would lock rows in scan order and deadlock against group locks.
 */
export async function releaseExpiredTasks(h: StoreHandle, now: Date): Promise<number> {
  const expired = (eb: ExpressionBuilder<Database, 'tasks'>) =>
    eb.and([eb('status', '=', 'CLAIMED'), eb('lease_expires_at', '<=', h.codec.time(now))]);
  try {
    const update = h.db
      .updateTable('tasks')
      .set({ status: 'PENDING', worker_id: null, claimed_at: null, lease_expires_at: null });
    const r =
      h.dialect === 'sqlite'
        ? await update.where(expired).executeTakeFirst()
        : await update
            .where('id', 'in', (eb) =>
              eb.selectFrom('tasks').select('id').where(expired).forUpdate().skipLocked(),
            )
            .where(expired)
            .executeTakeFirst();
    return Number(r.numUpdatedRows);
  } catch (error) {
    throw translateDriverError(error, 'release expired tasks');
  }
}
