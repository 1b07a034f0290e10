/**
 * Fleet operations as the API shows them: snake_case, ISO 8601 times, progress counted from
 * the actors' snapshots. Snapshots themselves are internal and never returned as they are.
 */
import { z } from 'zod';
import {
  batchProgress,
  restoreBatchSnapshot,
  restoreBroadcastSnapshot,
  type BatchItem,
  type BatchSnapshot,
} from '../../actors/index.js';
import type { BatchRecord } from './store/batches/batch.js';
import type { BroadcastRecord } from './store/broadcasts/broadcast.js';
import type { BroadcastDeviceOutcome } from './store/broadcasts/listBroadcastDevices.js';
import type { CommandScheduleRecord } from './store/commandSchedules/commandSchedule.js';
import type { ScheduleExecutionRecord } from './store/commandSchedules/scheduleExecutions.js';
import type { TemplateRecord } from './store/templates/template.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A batch, with progress (item counts by status) and its command list. */
export function batchJson(batch: BatchRecord, snapshot?: BatchSnapshot) {
  const live = snapshot ?? restoreBatchSnapshot(batch.actorSnapshot, batch.batchId);
  return {
    batch_id: batch.batchId,
    name: batch.name,
    execution_mode: batch.executionMode,
    stop_on_failure: live.context.stopOnFailure,
    status: batch.status,
    total_commands: batch.totalCommands,
    completed_count: batch.completedCount,
    failed_count: batch.failedCount,
    progress: batchProgress(live),
    device_count: new Set(live.context.items.map((i) => i.deviceId)).size,
    commands: live.context.commands,
    created_by: batch.createdBy,
    created_at: batch.createdAt.toISOString(),
    updated_at: batch.updatedAt.toISOString(),
    completed_at: iso(batch.completedAt),
  };
}

const progressSchema = z.object({
  total: z.number().int(),
  WAITING: z.number().int(),
  PENDING: z.number().int(),
  DELIVERED: z.number().int(),
  EXECUTED: z.number().int(),
  FAILED: z.number().int(),
  CANCELLED: z.number().int(),
  SKIPPED: z.number().int(),
});

/** Schema of {@link batchJson}. */
export const batchSchema = z.object({
  batch_id: z.uuid(),
  name: z.string().nullable(),
  execution_mode: z.enum(['SEQUENTIAL', 'PARALLEL']),
  stop_on_failure: z.boolean(),
  status: z.string(),
  total_commands: z.number().int(),
  completed_count: z.number().int(),
  failed_count: z.number().int(),
  progress: progressSchema,
  device_count: z.number().int(),
  commands: z.array(z.unknown()),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
});

/** One (device, command) item of a batch. */
export function batchItemJson(item: BatchItem) {
  return {
    command_id: item.commandId,
    device_id: item.deviceId,
    sequence: item.seq,
    status: item.status,
  };
}

/** Schema of {@link batchItemJson}. */
export const batchItemSchema = z.object({
  command_id: z.uuid(),
  device_id: z.string(),
  sequence: z.number().int(),
  status: z.string(),
});

/** A broadcast with its phases and counts. */
export function broadcastJson(broadcast: BroadcastRecord) {
  const live = restoreBroadcastSnapshot(broadcast.actorSnapshot, broadcast.broadcastId);
  const c = live.context;
  return {
    broadcast_id: broadcast.broadcastId,
    command_type: broadcast.commandType,
    payload: broadcast.payload,
    target: broadcast.targetFilter,
    rollout: broadcast.rollout,
    failure_threshold: broadcast.failureThreshold,
    status: broadcast.status,
    halt_reason: c.haltReason,
    current_phase: broadcast.currentPhase,
    phase_count: c.phases.length,
    next_phase_at: c.nextPhaseAt,
    total_devices: broadcast.totalDevices,
    succeeded_count: broadcast.succeededCount,
    failed_count: broadcast.failedCount,
    phases: c.phases.map((percent, i) => {
      const ran = c.history.find((h) => h.phase === i + 1);
      return {
        phase: i + 1,
        percent,
        size: ran?.size ?? null,
        started_at: ran?.startedAt ?? null,
        finished_at: ran?.finishedAt ?? null,
        stats: ran?.stats ?? null,
      };
    }),
    created_by: broadcast.createdBy,
    created_at: broadcast.createdAt.toISOString(),
    updated_at: broadcast.updatedAt.toISOString(),
    completed_at: iso(broadcast.completedAt),
  };
}

/** Schema of {@link broadcastJson}. */
export const broadcastSchema = z.object({
  broadcast_id: z.uuid(),
  command_type: z.string(),
  payload: z.unknown(),
  target: z.unknown(),
  rollout: z.unknown(),
  failure_threshold: z.number().nullable(),
  status: z.string(),
  halt_reason: z.enum(['FAILURE_THRESHOLD', 'PAUSED']).nullable(),
  current_phase: z.number().int(),
  phase_count: z.number().int(),
  next_phase_at: z.string().nullable(),
  total_devices: z.number().int(),
  succeeded_count: z.number().int(),
  failed_count: z.number().int(),
  phases: z.array(
    z.object({
      phase: z.number().int(),
      percent: z.number(),
      size: z.number().int().nullable(),
      started_at: z.string().nullable(),
      finished_at: z.string().nullable(),
      stats: z
        .object({
          pending: z.number().int(),
          delivered: z.number().int(),
          executed: z.number().int(),
          failed: z.number().int(),
          cancelled: z.number().int(),
        })
        .nullable(),
    }),
  ),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
});

/** One device's outcome in a broadcast. */
export function broadcastDeviceJson(d: BroadcastDeviceOutcome) {
  return {
    device_id: d.deviceId,
    command_id: d.commandId,
    phase: d.phase,
    status: d.status,
    retry_count: d.retryCount,
    error: d.error,
    result: d.result,
    delivered_at: iso(d.deliveredAt),
    executed_at: iso(d.executedAt),
  };
}

/** Schema of {@link broadcastDeviceJson}. */
export const broadcastDeviceSchema = z.object({
  device_id: z.string(),
  command_id: z.uuid(),
  phase: z.number().int(),
  status: z.string(),
  retry_count: z.number().int(),
  error: z.string().nullable(),
  result: z.unknown(),
  delivered_at: z.string().nullable(),
  executed_at: z.string().nullable(),
});

/** A template version. */
export function templateJson(t: TemplateRecord) {
  return {
    template_id: t.templateId,
    name: t.name,
    version: t.version,
    description: t.description,
    variables: t.variables,
    commands: t.commands,
    created_by: t.createdBy,
    created_at: t.createdAt.toISOString(),
  };
}

/** Schema of {@link templateJson}. */
export const templateSchema = z.object({
  template_id: z.uuid(),
  name: z.string(),
  version: z.number().int(),
  description: z.string().nullable(),
  variables: z.unknown(),
  commands: z.unknown(),
  created_by: z.string().nullable(),
  created_at: z.string(),
});

/** A command schedule. */
export function scheduleJson(s: CommandScheduleRecord) {
  return {
    schedule_id: s.scheduleId,
    name: s.name,
    schedule_type: s.scheduleType,
    cron_expression: s.cronExpression,
    run_at: iso(s.runAt),
    timezone: s.timezone,
    target: s.target,
    maintenance_window: s.maintenanceWindow,
    status: s.status,
    next_run_at: iso(s.nextRunAt),
    last_run_at: iso(s.lastRunAt),
    created_by: s.createdBy,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/** Schema of {@link scheduleJson}. */
export const scheduleSchema = z.object({
  schedule_id: z.uuid(),
  name: z.string(),
  schedule_type: z.enum(['ONCE', 'CRON']),
  cron_expression: z.string().nullable(),
  run_at: z.string().nullable(),
  timezone: z.string(),
  target: z.unknown(),
  maintenance_window: z.unknown(),
  status: z.string(),
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** One run of a schedule. */
export function executionJson(e: ScheduleExecutionRecord) {
  return {
    execution_id: e.executionId,
    schedule_id: e.scheduleId,
    scheduled_for: iso(e.scheduledFor),
    started_at: e.startedAt.toISOString(),
    finished_at: iso(e.finishedAt),
    status: e.status,
    result: e.result,
    error: e.error,
  };
}

/** Schema of {@link executionJson}. */
export const executionSchema = z.object({
  execution_id: z.uuid(),
  schedule_id: z.uuid(),
  scheduled_for: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  status: z.enum(['SUCCEEDED', 'FAILED', 'SKIPPED']),
  result: z.unknown(),
  error: z.string().nullable(),
});
