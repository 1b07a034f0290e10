import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Serialize changes to the versions of `commandType` until the caller's transaction ends
 * (a transaction-scoped advisory lock), so two registrations cannot both read the same
 * "latest version" and write a forked changelog. Cloud tier only.
 */
export async function lockCommandType(h: CloudHandle, commandType: string): Promise<void> {
  try {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`saffron:command_versions:${commandType}`}))`.execute(
      h.db,
    );
  } catch (error) {
    throw translateDriverError(error, `lock the versions of ${commandType}`);
  }
}
