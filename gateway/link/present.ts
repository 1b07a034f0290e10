/** Commands as the API and the socket show them: snake_case, ISO 8601 times. */
import { z } from 'zod';
import { COMMAND_STATUSES } from '../../runtime/index.js';
import { type CommandRecord } from '../commands/store/commands/command.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The JSON form of a command. */
export function commandJson(c: CommandRecord) {
  return {
    command_id: c.commandId,
    device_id: c.deviceId,
    command_type: c.commandType,
    payload: c.payload,
    status: c.status,
    retry_count: c.retryCount,
    max_retries: c.maxRetries,
    created_by: c.createdBy,
    created_at: c.createdAt.toISOString(),
    delivered_at: iso(c.deliveredAt),
    next_attempt_at: iso(c.nextAttemptAt),
    expires_at: iso(c.expiresAt),
    executed_at: iso(c.executedAt),
    result: c.result,
    error: c.error,
  };
}

/** Schema of {@link commandJson} (for the OpenAPI document). */
export const commandSchema = z.object({
  command_id: z.uuid(),
  device_id: z.string(),
  command_type: z.string(),
  payload: z.unknown(),
  status: z.enum(COMMAND_STATUSES),
  retry_count: z.number().int(),
  max_retries: z.number().int(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  executed_at: z.string().nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
});
