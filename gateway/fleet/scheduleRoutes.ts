/**
 * Command schedules (`/api/v1/command-schedules`): one-time or cron (with a time zone)
 * runs of a command, a template application or a broadcast, optionally only inside a
 * maintenance window; fired by the cluster's scheduler (scheduler.ts), every run recorded
 * (`…/{id}/executions`). Operators and admins create, pause, resume and delete; viewers
 * read. A schedule is checked when it is created as far as it can be — the cron
 * expression, the time zone, the command payloads, and a template target is rendered once
 * with its variables — so most mistakes are a 422 now rather than a FAILED run later.
 *
 * The creator must hold the roles the authorization policies require (403 ROLE_REQUIRED):
 * runs act as the system and are not checked for roles again. A schedule whose commands a
 * policy holds for approval may be created; each of its runs is then held for approval in
 * the creator's name (scheduler.ts), so the creator cannot approve its own schedule's runs.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { SCHEDULE_STATUSES } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { findMissingDevices } from '../devices/store/devices/findMissingDevices.js';
import { type CommandScheduleRecord } from './store/commandSchedules/commandSchedule.js';
import { getCommandSchedule } from './store/commandSchedules/getCommandSchedule.js';
import { insertCommandSchedule } from './store/commandSchedules/insertCommandSchedule.js';
import { listCommandSchedules } from './store/commandSchedules/listCommandSchedules.js';
import { listScheduleExecutions } from './store/commandSchedules/scheduleExecutions.js';
import { setCommandScheduleStatus } from './store/commandSchedules/setCommandScheduleStatus.js';
import { getTemplate } from './store/templates/getTemplate.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { gateCommands, type GateRequest } from '../governance/commandGate.js';
import { requesterOf } from '../governance/roles.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { nextCronTick } from './calendar.js';
import { refuseClearPan } from './create.js';
import { executionJson, executionSchema, scheduleJson, scheduleSchema } from './present.js';
import { createScheduleBody, type CreateScheduleBody } from './schemas.js';
import { renderTemplateCommands, templateDefinition } from './templates.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;
const tags = ['command schedules'];

const idParams = z.strictObject({ id: z.uuid() });
const listQuery = z.strictObject({
  status: z.enum(SCHEDULE_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
const executionsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const notFound = (id: string) =>
  new Problem(404, 'SCHEDULE_NOT_FOUND', `no command schedule ${id}`);

/** The first run of a schedule created or resumed at `now`. */
function firstRun(
  s: Pick<CommandScheduleRecord, 'scheduleType' | 'cronExpression' | 'timezone' | 'runAt'>,
  now: Date,
): Date | null {
  if (s.scheduleType === 'ONCE') return s.runAt;
  return nextCronTick(s.cronExpression!, s.timezone, now);
}

/**
 * Check what a schedule will create, as its creator: besides the checks below, command
 * versions and the roles authorization policies require (governance/commandGate.ts) — runs
 * act as the system and are not checked for roles again, so they are checked here. That a
 * policy holds the commands for approval is no reason to refuse: each run is held.
 */
async function checkTarget(
  ctx: GatewayContext,
  body: CreateScheduleBody,
  actor: CommandActor,
): Promise<void> {
  const target = body.target;
  const gate = (request: GateRequest) =>
    gateCommands(ctx.store, request, requesterOf(actor), ctx.now());
  switch (target.kind) {
    case 'COMMAND': {
      refuseClearPan([target.command]);
      const missing = await findMissingDevices(ctx.store, target.device_ids);
      if (missing.length > 0)
        throw new Problem(
          422,
          'UNKNOWN_DEVICES',
          `${missing.length} device(s) are not registered: ${missing.slice(0, 20).join(', ')}`,
          { device_ids: missing.slice(0, 100) },
        );
      await gate({
        commands: [target.command],
        deviceIds: target.device_ids,
        pathOf: () => '$.target.command',
      });
      return;
    }
    case 'BROADCAST':
      refuseClearPan([target.command]);
      await gate({
        commands: [target.command],
        deviceIds: 'any',
        pathOf: () => '$.target.command',
      });
      return;
    case 'TEMPLATE': {
      const template = await getTemplate(ctx.store, target.template_id);
      if (!template)
        throw new Problem(422, 'TEMPLATE_NOT_FOUND', `no command template ${target.template_id}`);
      const rendered = renderTemplateCommands(
        templateDefinition(template.commands, template.variables),
        target.variables,
      );
      if (!rendered.ok)
        throw new Problem(
          422,
          rendered.code,
          `the template does not render with these variables: ${rendered.issues
            .slice(0, 5)
            .map((i) => `${i.path}: ${i.message}`)
            .join('; ')}`,
          { errors: rendered.issues.slice(0, 50) },
        );
      refuseClearPan(rendered.commands);
      if (target.target.kind === 'broadcast' && rendered.commands.length !== 1)
        throw new Problem(
          422,
          'TEMPLATE_NOT_BROADCASTABLE',
          `a broadcast sends one command; the template has ${rendered.commands.length}`,
        );
      const on = target.target;
      await gate({
        commands: rendered.commands,
        deviceIds:
          on.kind === 'device' ? [on.device_id] : on.kind === 'batch' ? on.device_ids : 'any',
        pathOf: (i) => `$.template.commands[${i}]`,
      });
      return;
    }
    default: {
      const never: never = target;
      return never;
    }
  }
}

/** Register the schedule routes on `ctx`. */
export function registerScheduleRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-schedules',
      summary:
        "schedule a command, a template application or a broadcast (once or cron); when a policy holds its commands for approval, each run is held for approval in the creator's name",
      tags,
      access: { roles: MANAGE },
      body: createScheduleBody,
      response: scheduleSchema,
      status: 201,
      bodyLimit: 1024 * 1024,
    },
    async ({ body, principal, request }) => {
      await checkTarget(ctx, body, auditActor(principal, request));
      const now = ctx.now();
      const runAt = body.run_at !== undefined ? new Date(body.run_at) : null;
      const spec = {
        scheduleType: body.schedule_type,
        cronExpression: body.cron_expression ?? null,
        timezone: body.timezone,
        runAt,
      };
      const nextRunAt = firstRun(spec, now);
      if (!nextRunAt)
        throw new Problem(422, 'SCHEDULE_NEVER_RUNS', 'the cron expression has no future run');
      const schedule = await ctx.store.transaction((tx) =>
        insertCommandSchedule(
          tx,
          {
            scheduleId: randomUUID(),
            name: body.name,
            ...spec,
            targetKind: body.target.kind,
            target: body.target,
            maintenanceWindow: body.maintenance_window ?? null,
            nextRunAt,
          },
          auditActor(principal, request),
          now,
        ),
      );
      return scheduleJson(schedule);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-schedules',
      summary: 'list schedules (every status but DELETED unless ?status=)',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({ schedules: z.array(scheduleSchema) }),
    },
    async ({ query }) => ({
      schedules: (
        await listCommandSchedules(ctx.store, {
          limit: query.limit,
          ...(query.status !== undefined ? { status: query.status } : {}),
        })
      ).map(scheduleJson),
    }),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-schedules/:id',
      summary: 'a schedule',
      tags,
      access: { roles: READ },
      params: idParams,
      response: scheduleSchema,
    },
    async ({ params }) => {
      const schedule = await getCommandSchedule(ctx.store, params.id);
      if (!schedule) throw notFound(params.id);
      return scheduleJson(schedule);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-schedules/:id/executions',
      summary:
        "a schedule's runs, newest first (SUCCEEDED, FAILED, SKIPPED); a run held for approval is SUCCEEDED with result.held and result.approval_id",
      tags,
      access: { roles: READ },
      params: idParams,
      query: executionsQuery,
      response: z.object({ executions: z.array(executionSchema) }),
    },
    async ({ params, query }) => {
      if (!(await getCommandSchedule(ctx.store, params.id))) throw notFound(params.id);
      return {
        executions: (await listScheduleExecutions(ctx.store, params.id, query.limit)).map(
          executionJson,
        ),
      };
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-schedules/:id/pause',
      summary: 'pause an ACTIVE schedule',
      tags,
      access: { roles: MANAGE },
      params: idParams,
      response: scheduleSchema,
    },
    async ({ params, principal, request }) => {
      const changed = await ctx.store.transaction((tx) =>
        setCommandScheduleStatus(
          tx,
          params.id,
          { from: ['ACTIVE'], to: 'PAUSED', nextRunAt: null, event: 'SCHEDULE_PAUSED' },
          auditActor(principal, request),
          ctx.now(),
        ),
      );
      if (changed) return scheduleJson(changed);
      const current = await getCommandSchedule(ctx.store, params.id);
      if (!current || current.status === 'DELETED') throw notFound(params.id);
      throw new Problem(409, 'SCHEDULE_NOT_ACTIVE', `schedule ${params.id} is ${current.status}`, {
        status: current.status,
      });
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-schedules/:id/resume',
      summary: 'resume a PAUSED schedule from its next tick (a past one-time run fires now)',
      tags,
      access: { roles: MANAGE },
      params: idParams,
      response: scheduleSchema,
    },
    async ({ params, principal, request }) => {
      const current = await getCommandSchedule(ctx.store, params.id);
      if (!current || current.status === 'DELETED') throw notFound(params.id);
      const now = ctx.now();
      const changed =
        current.status === 'PAUSED'
          ? await ctx.store.transaction((tx) =>
              setCommandScheduleStatus(
                tx,
                params.id,
                {
                  from: ['PAUSED'],
                  to: 'ACTIVE',
                  nextRunAt: firstRun(current, now),
                  event: 'SCHEDULE_RESUMED',
                },
                auditActor(principal, request),
                now,
              ),
            )
          : undefined;
      if (changed) return scheduleJson(changed);
      throw new Problem(409, 'SCHEDULE_NOT_PAUSED', `schedule ${params.id} is ${current.status}`, {
        status: current.status,
      });
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/command-schedules/:id',
      status: 204,
      summary: 'delete a schedule (it never fires again; its runs stay readable)',
      tags,
      access: { roles: MANAGE },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const changed = await ctx.store.transaction((tx) =>
        setCommandScheduleStatus(
          tx,
          params.id,
          {
            from: ['ACTIVE', 'PAUSED', 'COMPLETED'],
            to: 'DELETED',
            nextRunAt: null,
            event: 'SCHEDULE_DELETED',
          },
          auditActor(principal, request),
          ctx.now(),
        ),
      );
      if (!changed) throw notFound(params.id);
      return undefined;
    },
  );
}
