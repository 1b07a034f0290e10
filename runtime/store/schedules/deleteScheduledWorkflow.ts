import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/**
 * Remove the schedule named `name`, so it fires no more (a CRON_SCHEDULE registration persists
 * until removed); false when there is none. A workflow that runs the CRON_SCHEDULE step again
 * registers it again.
 */
export async function deleteScheduledWorkflow(h: StoreHandle, name: string): Promise<boolean> {
  try {
    const r = await h.db
      .deleteFrom('scheduled_workflows')
      .where('schedule_name', '=', name)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `remove schedule ${name}`);
  }
}
