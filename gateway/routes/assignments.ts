/**
 * Device assignments: which workflows, policies, configuration and WASM components a device
 * gets. Operators assign and remove; viewers and the device itself read. A POLICY target is
 * a policy name (the device follows its newest version) and must exist; a WASM target is the
 * component's SHA-256. A device's active assignments are part of its signed configuration
 * document, so assigning or removing one changes that document's ETag.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ASSIGNMENT_TYPES, ConflictError } from '../../runtime/index.js';
import { type AssignmentRecord } from '../config/store/assignments/assignment.js';
import { deleteAssignment } from '../config/store/assignments/deleteAssignment.js';
import { insertAssignment } from '../config/store/assignments/insertAssignment.js';
import { listAssignments } from '../config/store/assignments/listAssignments.js';
import { getPolicy } from '../config/store/policies/getPolicy.js';
import { getDevice } from '../devices/store/devices/getDevice.js';
import { requireDeviceOrRole } from '../auth/principal.js';
import type { GatewayContext } from '../context.js';
import { deviceIdField, deviceParams, jsonObjectField, policyNameField } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;

const assignBody = z
  .strictObject({
    assignment_type: z.enum(ASSIGNMENT_TYPES),
    target_id: z.string().min(1).max(200),
    parameters: jsonObjectField.optional(),
  })
  .superRefine((body, issues) => {
    const target =
      body.assignment_type === 'POLICY'
        ? policyNameField
        : body.assignment_type === 'WASM'
          ? z.string().regex(/^[0-9a-f]{64}$/, 'a WASM target is the SHA-256 (hex) of the binary')
          : undefined;
    const result = target?.safeParse(body.target_id);
    if (result && !result.success)
      issues.addIssue({
        code: 'custom',
        path: ['target_id'],
        message: result.error.issues[0]?.message ?? 'invalid target',
      });
  });

const assignmentResponse = z.object({
  assignment_id: z.string(),
  device_id: z.string(),
  assignment_type: z.enum(ASSIGNMENT_TYPES),
  target_id: z.string(),
  parameters: jsonObjectField,
  active: z.boolean(),
  assigned_by: z.string().nullable(),
  created_at: z.string(),
});

const assignmentJson = (a: AssignmentRecord): z.infer<typeof assignmentResponse> => ({
  assignment_id: a.assignmentId,
  device_id: a.deviceId,
  assignment_type: a.assignmentType,
  target_id: a.targetId,
  parameters: a.parameters,
  active: a.active,
  assigned_by: a.assignedBy,
  created_at: a.createdAt.toISOString(),
});

const deviceNotFound = (deviceId: string) =>
  new Problem(404, 'DEVICE_NOT_FOUND', `no device '${deviceId}'`);

/** Register the assignment routes. */
export function registerAssignmentRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/devices/:device_id/assignments',
      summary: "a device's assignments (operators, or the device itself)",
      tags: ['devices'],
      access: { roles: READ, devices: true },
      params: deviceParams,
      response: z.object({ assignments: z.array(assignmentResponse) }),
    },
    async ({ params, principal }) => {
      requireDeviceOrRole(principal, params.device_id, READ);
      if (!(await getDevice(ctx.store, params.device_id))) throw deviceNotFound(params.device_id);
      const assignments = await listAssignments(ctx.store, params.device_id);
      return { assignments: assignments.map(assignmentJson) };
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/devices/:device_id/assignments',
      summary: 'assign a workflow, policy, configuration or WASM component to a device',
      tags: ['devices'],
      access: { roles: MANAGE },
      params: deviceParams,
      body: assignBody,
      response: assignmentResponse,
      status: 201,
    },
    async ({ params, body, principal }) => {
      if (!(await getDevice(ctx.store, params.device_id))) throw deviceNotFound(params.device_id);
      if (body.assignment_type === 'POLICY' && !(await getPolicy(ctx.store, body.target_id)))
        throw new Problem(422, 'UNKNOWN_POLICY', `no policy '${body.target_id}'`, {
          errors: [{ path: '$.target_id', message: 'no such policy' }],
        });
      try {
        // the device's configuration and fraud rules list its assignments: cached tags go
        const assignment = await ctx.changes.transaction(async (tx, changed) => {
          const inserted = await insertAssignment(
            tx,
            {
              assignmentId: randomUUID(),
              deviceId: params.device_id,
              assignmentType: body.assignment_type,
              targetId: body.target_id,
              ...(body.parameters !== undefined ? { parameters: body.parameters } : {}),
              assignedBy: principal.kind === 'user' ? principal.name : principal.deviceId,
            },
            ctx.now(),
          );
          await changed({ kind: 'devices', deviceIds: [params.device_id] });
          return inserted;
        });
        return assignmentJson(assignment);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(
            409,
            'ASSIGNMENT_EXISTS',
            `${body.assignment_type} '${body.target_id}' is already assigned to '${params.device_id}'`,
          );
        throw error;
      }
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/devices/:device_id/assignments/:assignment_id',
      status: 204,
      summary: 'remove an assignment',
      tags: ['devices'],
      access: { roles: MANAGE },
      params: z.strictObject({ device_id: deviceIdField, assignment_id: z.uuid() }),
    },
    async ({ params }) => {
      const deleted = await ctx.changes.transaction(async (tx, changed) => {
        const gone = await deleteAssignment(tx, params.device_id, params.assignment_id);
        if (gone) await changed({ kind: 'devices', deviceIds: [params.device_id] });
        return gone;
      });
      if (!deleted)
        throw new Problem(
          404,
          'ASSIGNMENT_NOT_FOUND',
          `device '${params.device_id}' has no assignment ${params.assignment_id}`,
        );
      return undefined;
    },
  );
}
