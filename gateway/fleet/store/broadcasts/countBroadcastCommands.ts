import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** How many commands of one phase are in one status. */
export interface BroadcastCommandCount {
  phase: number;
  status: string;
  count: number;
}

/** Commands of broadcast `broadcastId` counted by phase and status. */
export async function countBroadcastCommands(
  h: CloudHandle,
  broadcastId: string,
): Promise<BroadcastCommandCount[]> {
  try {
    const result = await sql<{ phase: number | string | null; status: string; n: number | string }>`
      SELECT batch_sequence AS phase, status, count(*) AS n FROM device_commands
      WHERE broadcast_id = ${broadcastId}::uuid
      GROUP BY batch_sequence, status`.execute(h.db);
    return result.rows.map((r) => ({
      phase: r.phase === null ? 0 : h.codec.parseInt(r.phase),
      status: r.status,
      count: h.codec.parseInt(r.n),
    }));
  } catch (error) {
    throw translateDriverError(error, `count commands of broadcast ${broadcastId}`);
  }
}
