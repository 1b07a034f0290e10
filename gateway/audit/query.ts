/**
 * The audit query's filters, shared by the JSON list and the exports: exact matches on
 * device, command, actor, event types (comma-separated), batch and broadcast, a time range
 * (`from` inclusive, `to` exclusive) and `q`, words searched in full text. Everything is
 * validated here and reaches SQL as parameters.
 */
import { z } from 'zod';
import type { CommandAuditFilter } from './store/commandAudit/index.js';
import { deviceIdField } from '../fields.js';
import { timeQueryField } from '../timeQuery.js';

const EVENT_TYPE = /^[A-Z][A-Z0-9_]{0,99}$/;

/** Query fields of the filters. */
export const auditFilterFields = {
  device_id: deviceIdField.optional(),
  command_id: z.uuid().optional(),
  actor: z.string().min(1).max(200).optional(),
  event_type: z
    .string()
    .max(2000)
    .transform((text) => text.split(',').map((t) => t.trim()))
    .refine((types) => types.length <= 50 && types.every((t) => EVENT_TYPE.test(t)), {
      message: 'comma-separated event types such as COMMAND_EXECUTED,COMMAND_FAILED (at most 50)',
    })
    .optional(),
  batch_id: z.uuid().optional(),
  broadcast_id: z.uuid().optional(),
  from: timeQueryField.optional(),
  to: timeQueryField.optional(),
  q: z.string().min(1).max(200).optional().meta({
    description: 'words that must all appear (event type, actor, role, device, detail values)',
  }),
};

type FilterQuery = {
  [K in keyof typeof auditFilterFields]?: z.output<(typeof auditFilterFields)[K]>;
};

/** The store filter of a parsed query. */
export function auditFilter(query: FilterQuery): CommandAuditFilter {
  return {
    ...(query.device_id !== undefined ? { deviceId: query.device_id } : {}),
    ...(query.command_id !== undefined ? { commandId: query.command_id } : {}),
    ...(query.actor !== undefined ? { actor: query.actor } : {}),
    ...(query.event_type !== undefined ? { eventTypes: query.event_type } : {}),
    ...(query.batch_id !== undefined ? { batchId: query.batch_id } : {}),
    ...(query.broadcast_id !== undefined ? { broadcastId: query.broadcast_id } : {}),
    ...(query.from !== undefined ? { from: new Date(query.from) } : {}),
    ...(query.to !== undefined ? { to: new Date(query.to) } : {}),
    ...(query.q !== undefined ? { text: query.q } : {}),
  };
}
