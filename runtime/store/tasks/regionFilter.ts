import { sql, type RawBuilder } from 'kysely';
import type { TaskClaim } from './claimTasks.js';

/** The claim's region condition (`AND …`), or nothing when the worker serves every region. */
export function regionFilter(claim: TaskClaim): RawBuilder<unknown> {
  if (claim.regions === undefined) return sql``;
  if (claim.regions.length === 0) return sql`AND data_region IS NULL`;
  return sql`AND (data_region IS NULL OR data_region IN (${sql.join(claim.regions.map((r) => sql`${r}`))}))`;
}

/** The parameters {@link regionFilter} adds, in order. */
export const regionParameters = (claim: TaskClaim): readonly string[] => claim.regions ?? [];
