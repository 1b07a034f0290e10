/**
 * Request schemas of the fleet operations API (batches, broadcasts, templates, schedules).
 * Commands inside them are validated by the same per-type payload schemas as a single
 * command (link/commandTypes.ts), so a batch or a broadcast can carry nothing a direct
 * command could not. Target filters are data — equality criteria that become parameterized
 * SQL in the store — never SQL text.
 */
import { z } from 'zod';
import { DEVICE_STATUSES } from '../../runtime/index.js';
import { BATCH_EXECUTION_MODES } from './store/batches/batch.js';
import { createCommandBody } from '../link/commandTypes.js';
import { cronProblem, isTimeZone, WEEKDAYS } from './calendar.js';

/** Most devices a batch addresses. */
export const MAX_BATCH_DEVICES = 1000;
/** Most commands per device in a batch or template. */
export const MAX_BATCH_COMMANDS = 50;
/** Most (device, command) pairs in one batch. */
export const MAX_BATCH_ITEMS = 10_000;
/** Lifetime of a broadcast's commands when the request gives none (so a phase settles). */
export const DEFAULT_BROADCAST_COMMAND_TTL_SECONDS = 3600;

const deviceId = z.string().min(1).max(100);
const uniqueDevices = (max: number) =>
  z
    .array(deviceId)
    .min(1)
    .max(max)
    .refine((ids) => new Set(ids).size === ids.length, 'device ids must be unique');

/** One command (type, typed payload, retries, lifetime). */
export const commandSpec = createCommandBody;

const oneOrMany = (max: number) =>
  z.union([z.string().min(1).max(max), z.array(z.string().min(1).max(max)).min(1).max(100)]);

/** Which devices a broadcast targets; every given criterion must hold. */
export const targetFilterSchema = z
  .strictObject({
    device_ids: uniqueDevices(MAX_BATCH_ITEMS).optional(),
    device_type: oneOrMany(50).optional(),
    location: oneOrMany(200).optional(),
    status: z.union([z.enum(DEVICE_STATUSES), z.array(z.enum(DEVICE_STATUSES)).min(1)]).optional(),
    metadata: z
      .record(z.string().min(1).max(100), z.union([z.string().max(500), z.number(), z.boolean()]))
      .refine((m) => Object.keys(m).length <= 20, 'at most 20 metadata fields')
      .optional(),
    /** Explicitly every registered device (a filter with no criterion is refused otherwise). */
    all_devices: z.literal(true).optional(),
  })
  .refine(
    (t) => Object.keys(t).length > 0,
    'name at least one criterion, or all_devices: true to target every device',
  );

/** How a broadcast rolls out. */
export const rolloutSchema = z
  .strictObject({
    /** Cumulative percentages of the targeted devices per phase, e.g. [1, 10, 100]. */
    phases: z
      .array(z.number().gt(0).max(100))
      .min(1)
      .max(10)
      .default([100])
      .refine(
        (p) => p.every((x, i) => i === 0 || x > p[i - 1]!),
        'phases must be strictly increasing',
      )
      .refine((p) => p.at(-1) === 100, 'the last phase must be 100'),
    /** Seconds between a phase settling and the next one starting. */
    wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(0),
  })
  .prefault({});

/** Failure rate (0–1) of a phase above which the broadcast halts. */
const failureThreshold = z.number().min(0).max(1).optional();

/** `POST /api/v1/command-batches`. */
export const createBatchBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    execution_mode: z.enum(BATCH_EXECUTION_MODES).default('PARALLEL'),
    /** SEQUENTIAL: skip a device's remaining commands after one fails (default true). */
    stop_on_failure: z.boolean().default(true),
    device_ids: uniqueDevices(MAX_BATCH_DEVICES),
    commands: z.array(commandSpec).min(1).max(MAX_BATCH_COMMANDS),
  })
  .refine((b) => b.device_ids.length * b.commands.length <= MAX_BATCH_ITEMS, {
    message: `a batch holds at most ${MAX_BATCH_ITEMS} commands (devices × commands)`,
    path: ['commands'],
  });

/** `POST /api/v1/command-broadcasts`. */
export const createBroadcastBody = z.strictObject({
  command: commandSpec,
  target: targetFilterSchema,
  rollout: rolloutSchema,
  failure_threshold: failureThreshold,
});

const variableName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
    'a variable name is a letter or _, then letters, digits, _',
  )
  .refine((n) => !['state', 'context', 'secrets'].includes(n), 'this name is reserved');

/** Types a template variable may have. */
export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'object', 'array'] as const;

/** One template variable. */
export const variableSchema = z.strictObject({
  type: z.enum(VARIABLE_TYPES),
  required: z.boolean().default(false),
  default: z.unknown().optional(),
  description: z.string().max(500).optional(),
});

/** One command of a template: its payload may hold `{{ variable }}` references. */
export const templateCommandSchema = z.strictObject({
  command_type: z.string().min(1).max(50),
  payload: z.record(z.string(), z.unknown()).default({}),
  max_retries: z.number().int().min(0).max(20).default(3),
  expires_in_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
});

/** `POST /api/v1/command-templates`. */
export const createTemplateBody = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  variables: z
    .record(variableName, variableSchema)
    .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables')
    .default({}),
  commands: z.array(templateCommandSchema).min(1).max(MAX_BATCH_COMMANDS),
});

/** Where a template's commands go. */
export const applyTargetSchema = z.discriminatedUnion('kind', [
  /** One device: a SEQUENTIAL batch of the template's commands. */
  z.strictObject({ kind: z.literal('device'), device_id: deviceId }),
  /** Many devices: a batch. */
  z.strictObject({
    kind: z.literal('batch'),
    name: z.string().min(1).max(200).optional(),
    device_ids: uniqueDevices(MAX_BATCH_DEVICES),
    execution_mode: z.enum(BATCH_EXECUTION_MODES).default('SEQUENTIAL'),
    stop_on_failure: z.boolean().default(true),
  }),
  /** A filter: a broadcast (the template must hold exactly one command). */
  z.strictObject({
    kind: z.literal('broadcast'),
    target: targetFilterSchema,
    rollout: rolloutSchema,
    failure_threshold: failureThreshold,
  }),
]);

const variableValues = z
  .record(z.string().max(64), z.unknown())
  .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables')
  .default({});

/** `POST /api/v1/command-templates/{id}/apply`. */
export const applyTemplateBody = z.strictObject({
  variables: variableValues,
  target: applyTargetSchema,
});

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time is HH:MM (00:00–23:59)');

/** A daily maintenance window in the schedule's time zone. */
export const maintenanceWindowSchema = z.strictObject({
  days: z.array(z.enum(WEEKDAYS)).min(1).max(7).optional(),
  start: hhmm,
  end: hhmm,
});

/** What a schedule fires. */
export const scheduleTargetSchema = z.discriminatedUnion('kind', [
  /** A command to each of these devices (a PARALLEL batch per run). */
  z.strictObject({
    kind: z.literal('COMMAND'),
    device_ids: uniqueDevices(MAX_BATCH_DEVICES),
    command: commandSpec,
  }),
  /** A template application. */
  z.strictObject({
    kind: z.literal('TEMPLATE'),
    template_id: z.uuid(),
    variables: variableValues,
    target: applyTargetSchema,
  }),
  /** A broadcast. */
  z.strictObject({
    kind: z.literal('BROADCAST'),
    command: commandSpec,
    target: targetFilterSchema,
    rollout: rolloutSchema,
    failure_threshold: failureThreshold,
  }),
]);

/** `POST /api/v1/command-schedules`. */
export const createScheduleBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    schedule_type: z.enum(['ONCE', 'CRON']),
    cron_expression: z.string().min(1).max(200).optional(),
    run_at: z.iso
      .datetime({ offset: true })
      .refine((t) => Date.parse(t) >= Date.UTC(2000, 0, 1), 'run_at must be in this millennium')
      .optional(),
    timezone: z.string().min(1).max(100).default('UTC'),
    maintenance_window: maintenanceWindowSchema.optional(),
    target: scheduleTargetSchema,
  })
  .superRefine((s, issue) => {
    if (!isTimeZone(s.timezone))
      issue.addIssue({ code: 'custom', path: ['timezone'], message: 'unknown time zone' });
    if (s.schedule_type === 'ONCE') {
      if (s.run_at === undefined)
        issue.addIssue({
          code: 'custom',
          path: ['run_at'],
          message: 'a ONCE schedule needs run_at',
        });
      if (s.cron_expression !== undefined)
        issue.addIssue({
          code: 'custom',
          path: ['cron_expression'],
          message: 'a ONCE schedule has no cron_expression',
        });
    } else {
      if (s.run_at !== undefined)
        issue.addIssue({
          code: 'custom',
          path: ['run_at'],
          message: 'a CRON schedule has no run_at',
        });
      if (s.cron_expression === undefined)
        issue.addIssue({
          code: 'custom',
          path: ['cron_expression'],
          message: 'a CRON schedule needs cron_expression',
        });
      else if (isTimeZone(s.timezone)) {
        const problem = cronProblem(s.cron_expression, s.timezone);
        if (problem)
          issue.addIssue({ code: 'custom', path: ['cron_expression'], message: problem });
      }
    }
  });

/** A parsed target filter. */
export type TargetFilter = z.output<typeof targetFilterSchema>;
/** A parsed rollout. */
export type Rollout = z.output<typeof rolloutSchema>;
/** A parsed template body. */
export type CreateTemplateBody = z.output<typeof createTemplateBody>;
/** A parsed apply target. */
export type ApplyTarget = z.output<typeof applyTargetSchema>;
/** A parsed schedule body. */
export type CreateScheduleBody = z.output<typeof createScheduleBody>;
/** A parsed schedule target. */
export type ScheduleTarget = z.output<typeof scheduleTargetSchema>;
