/**
 * A command payload checked against its schema on the device: the parsed value, or a
 * COMMAND_PAYLOAD_INVALID error listing every failing JSON path (acked as the command's
 * failure).
 */
import type { z } from 'zod';
import { CommandError } from './errors.js';

/** Parse `payload` (absent = `{}`) with `schema`. */
export function payloadOf<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({
    path: ['$', ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw new CommandError(
    'COMMAND_PAYLOAD_INVALID',
    issues.map((i) => `${i.path}: ${i.message}`).join('; '),
    { details: { issues } },
  );
}
