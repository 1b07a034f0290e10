import { sql, type RawBuilder } from 'kysely';
import type { TaskClaim } from './claimTasks.js';

/** The claim's region condition (`AND …`), or nothing when the worker serves every region. */
export function regionFilter(claim: TaskClaim): RawBuilder<unknown> {
  if (claim.regions === undefined) return sql``;
  return sql`AND (data_region IS NULL OR data_region IN (${sql.join(claim.regions.map((r) => sql`${r}`))}))`;
}
