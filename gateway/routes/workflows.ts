/**
 * The workflows API: start, read, list (paged, filtered), drive (`next`, `resume`, `retry`,
 * `cancel`, `pause`), the audit trail, and workflow definitions registered at runtime —
 * persisted, so a restarted control plane serves the same types. Operators drive; viewers
 * read; only admins register definitions (they run code under the server's steps root).
 */
import { z } from 'zod';
import { auditEventJson, workflowJson } from '../../actors/index.js';
import {
  DefinitionError,
  definitionHash,
  EDGE_SUMMARY_SOURCE,
  listWorkflowDefinitions,
  loadDefinition,
  saveWorkflowDefinition,
  WORKFLOW_STATUSES,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { columnString } from '../columnFields.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const DRIVE = ['admin', 'operator'] as const;

const jsonObject = z.record(z.string(), z.unknown());
const idParams = z.strictObject({ id: z.uuid() });
const inputBody = z.strictObject({ input: jsonObject.optional() }).optional();

const startBody = z.strictObject({
  workflow_type: columnString('workflow_executions', 'workflow_type'),
  data: jsonObject.optional(),
  idempotency_key: columnString('workflow_executions', 'idempotency_key').optional(),
  owner_id: columnString('workflow_executions', 'owner_id').optional(),
  data_region: z.string().min(1).max(50).optional(),
});

const listQuery = z.strictObject({
  status: z.enum(WORKFLOW_STATUSES).optional(),
  workflow_type: columnString('workflow_executions', 'workflow_type').optional(),
  owner_id: columnString('workflow_executions', 'owner_id').optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(200).optional(),
});

const workflowResponse = z.object({
  id: z.string(),
  workflow_type: z.string(),
  workflow_version: z.string().nullable(),
  status: z.enum(WORKFLOW_STATUSES),
  current_step: z.string().nullable(),
  current_step_index: z.number(),
  state: jsonObject,
  created_at: z.string(),
  updated_at: z.string(),
  parent_workflow_id: z.string().optional(),
  error: z
    .object({
      code: z.string().nullable(),
      message: z.string().nullable(),
      step: z.string().nullable(),
    })
    .optional(),
});

const auditResponse = z.object({
  events: z.array(
    z.object({
      timestamp: z.string(),
      event_type: z.string(),
      step_name: z.string().nullable(),
      data: z.unknown(),
    }),
  ),
});

const definitionResponse = z.object({
  workflow_type: z.string(),
  workflow_version: z.string().nullable(),
  definition_hash: z.string(),
  steps: z.array(z.object({ name: z.string(), type: z.string() })),
});

/** Keyset cursor: the last item's creation time and id. */
const encodeCursor = (record: WorkflowRecord) =>
  Buffer.from(`${record.createdAt.toISOString()}|${record.id}`).toString('base64url');

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || !z.uuid().safeParse(id).success || Number.isNaN(createdAt.getTime()))
    throw new Problem(400, 'INVALID_CURSOR', 'the cursor is not one this API returned');
  return { createdAt, id };
}

/** 409 for a workflow that ran on a device: the cloud holds its summary, it does not run it. */
async function refuseEdgeSummary(ctx: GatewayContext, id: string): Promise<void> {
  const { metadata } = await ctx.runtime.get(id);
  if (metadata.source === EDGE_SUMMARY_SOURCE)
    throw new Problem(
      409,
      'EDGE_WORKFLOW',
      `workflow ${id} ran on device ${String(metadata.device_id)}; the cloud keeps its summary only, retry it on the device`,
    );
}

/** Register every persisted definition with the runtime (latest registration wins). */
async function restoreDefinitions(ctx: GatewayContext): Promise<void> {
  for (const stored of await listWorkflowDefinitions(ctx.store)) {
    try {
      const loaded = await loadDefinition(stored.sourceYaml, { stepsRoot: ctx.stepsRoot });
      ctx.runtime.registry.register(loaded.definition);
    } catch (error) {
      ctx.app.log.error(
        { err: error, workflow_type: stored.workflowType, hash: stored.definitionHash },
        'a stored workflow definition no longer loads; it is not served',
      );
    }
  }
}

/** Register the workflow routes. */
export async function registerWorkflowRoutes(ctx: GatewayContext): Promise<void> {
  await restoreDefinitions(ctx);
  const tags = ['workflows'];

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/workflows',
      summary: 'start a workflow; runs its steps until it waits or ends',
      tags,
      access: { roles: DRIVE },
      body: startBody,
      response: workflowResponse,
      status: 201,
    },
    async ({ body, principal }) => {
      if (!ctx.runtime.registry.get(body.workflow_type))
        throw new Problem(
          422,
          'UNKNOWN_WORKFLOW_TYPE',
          `workflow type '${body.workflow_type}' is not registered`,
        );
      const record = await ctx.runtime.start(body.workflow_type, body.data ?? {}, {
        ...(body.idempotency_key ? { idempotencyKey: body.idempotency_key } : {}),
        ownerId: body.owner_id ?? (principal.kind === 'user' ? principal.name : null) ?? undefined,
        ...(body.data_region ? { dataRegion: body.data_region } : {}),
      });
      return workflowJson(record);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/workflows',
      summary: 'list workflows, newest first (keyset paging with cursor)',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({ items: z.array(workflowResponse), next_cursor: z.string().nullable() }),
    },
    async ({ query }) => {
      const items = await ctx.runtime.list({
        limit: query.limit + 1,
        ...(query.status ? { status: query.status } : {}),
        ...(query.workflow_type ? { workflowType: query.workflow_type } : {}),
        ...(query.owner_id ? { ownerId: query.owner_id } : {}),
        ...(query.cursor ? { before: decodeCursor(query.cursor) } : {}),
      });
      const page = items.slice(0, query.limit);
      return {
        items: page.map(workflowJson),
        next_cursor: items.length > query.limit ? encodeCursor(page.at(-1)!) : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/workflows/:id',
      summary: 'a workflow with its state',
      tags,
      access: { roles: READ },
      params: idParams,
      response: workflowResponse,
    },
    async ({ params }) => workflowJson(await ctx.runtime.get(params.id)),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/workflows/:id/statechart',
      summary:
        "the workflow's compiled machine as a graph (states, transitions, branches, loop bodies) and its current state",
      tags,
      responseHeaders: { 'Cache-Control': { description: 'no-store', required: true } },
      access: { roles: READ },
      params: idParams,
      response: z.object({
        workflow: workflowResponse,
        version: z.number(),
        machine: z.object({
          machine_id: z.string(),
          definition_hash: z.string(),
          initial: z.string(),
          nodes: z.array(z.record(z.string(), z.unknown())),
          edges: z.array(z.record(z.string(), z.unknown())),
        }),
        active: z.object({ state: z.string(), substate: z.string().nullable() }),
        visits: z.record(z.string(), z.number()),
      }),
    },
    async ({ params, reply }) => {
      const { record, chart, position, visits } = await ctx.runtime.statechart(params.id);
      reply.header('cache-control', 'no-store');
      return {
        workflow: workflowJson(record),
        version: record.version,
        machine: {
          machine_id: chart.machineId,
          definition_hash: chart.definitionHash,
          initial: chart.initial,
          nodes: chart.nodes,
          edges: chart.edges,
        },
        active: { state: position.key, substate: position.sub },
        visits,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/workflows/:id/audit',
      summary: 'the audit trail of a workflow, oldest first',
      tags,
      access: { roles: READ },
      params: idParams,
      response: auditResponse,
    },
    async ({ params }) => {
      await ctx.runtime.get(params.id); // 404 for an unknown id
      return { events: (await ctx.runtime.audit(params.id)).map(auditEventJson) };
    },
  );

  const drive = (
    name: string,
    summary: string,
    act: (
      id: string,
      body: { input?: Record<string, unknown> } | undefined,
    ) => Promise<WorkflowRecord>,
  ) =>
    route(
      ctx,
      {
        method: 'POST',
        url: `/api/v1/workflows/:id/${name}`,
        summary,
        tags,
        access: { roles: DRIVE },
        params: idParams,
        body: inputBody,
        response: workflowResponse,
      },
      async ({ params, body }) => workflowJson(await act(params.id, body)),
    );
  drive('next', 'run the current step of an ACTIVE workflow (with optional input)', (id, b) =>
    ctx.runtime.next(id, b?.input),
  );
  drive('resume', 'give human input to a waiting workflow, or undo an operator pause', (id, b) =>
    ctx.runtime.resume(id, b?.input ?? {}),
  );
  drive('pause', 'pause a workflow until resumed', (id) => ctx.runtime.pause(id));

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/workflows/:id/retry',
      summary: 'restart a failed or cancelled workflow (default: at the failed step)',
      tags,
      access: { roles: DRIVE },
      params: idParams,
      body: z
        .strictObject({
          from_step: columnString('workflow_executions', 'current_step').optional(),
          input: jsonObject.optional(),
        })
        .optional(),
      response: workflowResponse,
    },
    async ({ params, body }) => {
      await refuseEdgeSummary(ctx, params.id);
      return workflowJson(
        await ctx.runtime.retry(params.id, {
          ...(body?.from_step ? { fromStep: body.from_step } : {}),
          ...(body?.input ? { input: body.input } : {}),
        }),
      );
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/workflows/:id/cancel',
      summary: 'cancel a workflow that has not ended',
      tags,
      access: { roles: DRIVE },
      params: idParams,
      body: z.strictObject({ reason: z.string().min(1).max(500).optional() }).optional(),
      response: workflowResponse,
    },
    async ({ params, body }) =>
      workflowJson(
        await ctx.runtime.cancel(params.id, body?.reason ? { reason: body.reason } : {}),
      ),
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/workflow-definitions',
      summary: 'register a workflow definition (YAML); new workflows of its type use it',
      tags,
      access: { roles: ['admin'] },
      body: z.strictObject({
        yaml: z
          .string()
          .min(1)
          .max(512 * 1024),
      }),
      response: definitionResponse.extend({ created: z.boolean() }),
      status: 201,
    },
    async ({ body, principal }) => {
      let definition;
      try {
        definition = (await loadDefinition(body.yaml, { stepsRoot: ctx.stepsRoot })).definition;
      } catch (error) {
        if (!(error instanceof DefinitionError)) throw error;
        throw new Problem(422, 'DEFINITION_INVALID', 'the workflow definition is invalid', {
          errors: error.issues
            .filter((i) => i.severity === 'error')
            .map((i) => ({
              path: i.path,
              message: i.message,
              code: i.code,
              ...(i.line !== undefined ? { line: i.line, column: i.column } : {}),
            })),
        });
      }
      const hash = definitionHash(definition);
      const created = await saveWorkflowDefinition(ctx.store, {
        workflowType: definition.workflow_type,
        workflowVersion: definition.workflow_version ?? null,
        definitionHash: hash,
        sourceYaml: body.yaml,
        createdBy: principal.kind === 'user' ? principal.name : null,
      });
      ctx.runtime.registry.register(definition);
      return {
        workflow_type: definition.workflow_type,
        workflow_version: definition.workflow_version ?? null,
        definition_hash: hash,
        steps: definition.steps.map((s) => ({ name: s.name, type: s.type })),
        created,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/workflow-definitions',
      summary: 'the workflow types this control plane can start',
      tags,
      access: { roles: READ },
      response: z.object({ definitions: z.array(definitionResponse) }),
    },
    () =>
      Promise.resolve({
        definitions: ctx.runtime.registry.types().map((type) => {
          const d = ctx.runtime.registry.get(type)!;
          return {
            workflow_type: type,
            workflow_version: d.workflow_version ?? null,
            definition_hash: definitionHash(d),
            steps: d.steps.map((s) => ({ name: s.name, type: s.type })),
          };
        }),
      }),
  );
}
