/**
 * The device registry: registration (admin token or registration key), list / get / update
 * / delete, secret rotation with a grace period, and the device metrics report.
 *
 * Credentials are shown once. Registration and rotation answer with the device secret (and
 * registration with the api_key) and `Cache-Control: no-store`; afterwards the secret exists
 * only sealed (AES-256-GCM under the master key) and the api_key only as its SHA-256, and no
 * read returns either. Roles: admins and operators manage devices, viewers read, only admins
 * register or delete; a device may read itself, rotate its own secret and report its own
 * metrics — any other device's resources are a 403.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ConflictError, DEVICE_STATUSES, verifyRequestSignature } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { deleteDevice } from '../devices/store/devices/deleteDevice.js';
import { type DeviceRecord } from '../devices/store/devices/device.js';
import { getDevice } from '../devices/store/devices/getDevice.js';
import { insertDevice } from '../devices/store/devices/insertDevice.js';
import { listDevices } from '../devices/store/devices/listDevices.js';
import { recordDeviceMetrics } from '../devices/store/devices/recordDeviceMetrics.js';
import {
  getDeviceSecret,
  rotateDeviceSecret,
} from '../devices/store/devices/rotateDeviceSecret.js';
import { updateDevice } from '../devices/store/devices/updateDevice.js';
import { consumeRegistrationKey } from '../devices/store/registrationKeys/consumeRegistrationKey.js';
import { authenticate } from '../auth/authenticate.js';
import {
  credentialHash,
  newApiKey,
  newDeviceSecret,
  REGISTRATION_KEY_PATTERN,
} from '../auth/credentials.js';
import { requireDeviceOrRole, requireRole } from '../auth/principal.js';
import type { GatewayContext } from '../context.js';
import { createDeviceGauges } from '../deviceGauges.js';
import {
  deviceIdField,
  deviceParams,
  deviceTypeField,
  isoOrNull,
  jsonObjectField,
} from '../fields.js';
import { auditActor } from '../auditActor.js';
import { columnString } from '../columnFields.js';
import { Problem } from '../problem.js';
import { rawBody, route } from '../route.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;

/** Grace period of the previous secret after a rotation, unless the request says otherwise. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
const MAX_ROTATION_GRACE_SECONDS = 30 * 24 * 3600;

/** Operator metadata; `metrics` is where the device's own report lives, so it is reserved. */
const metadataField = jsonObjectField.refine((m) => !Object.hasOwn(m, 'metrics'), {
  message: "'metrics' is reserved for the device's metrics report",
});

const registerBody = z.strictObject({
  device_id: deviceIdField.optional(),
  device_name: columnString('edge_devices', 'device_name'),
  device_type: deviceTypeField,
  location: columnString('edge_devices', 'location'),
  firmware_version: columnString('edge_devices', 'firmware_version').optional(),
  registration_key: z.string().max(100).optional(),
  metadata: metadataField.optional(),
});

const registerResponse = z.object({
  device_id: z.string(),
  api_key: z.string(),
  device_secret: z.string(),
});

const updateBody = z
  .strictObject({
    device_name: columnString('edge_devices', 'device_name').optional(),
    device_type: deviceTypeField.optional(),
    location: columnString('edge_devices', 'location').optional(),
    firmware_version: columnString('edge_devices', 'firmware_version').optional(),
    metadata: metadataField.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'change at least one field' });

const listQuery = z.strictObject({
  status: z.enum(DEVICE_STATUSES).optional(),
  device_type: deviceTypeField.optional(),
  location: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(200).optional(),
});

const rotateBody = z
  .strictObject({
    grace_period_seconds: z.number().int().min(0).max(MAX_ROTATION_GRACE_SECONDS).optional(),
  })
  .optional();

const metricsBody = z.strictObject({
  disk_usage_percent: z.number().min(0).max(100),
  memory_usage_mb: z.number().min(0),
  pending_transactions: z.number().int().min(0),
  /** Null when the device has never synced. */
  last_sync: z.iso.datetime({ offset: true }).nullable(),
  network_available: z.boolean(),
});

const deviceResponse = z.object({
  device_id: z.string(),
  device_name: z.string().nullable(),
  device_type: z.string().nullable(),
  location: z.string().nullable(),
  status: z.enum(DEVICE_STATUSES),
  firmware_version: z.string().nullable(),
  metadata: jsonObjectField,
  metrics: jsonObjectField.nullable(),
  registration_key_id: z.string().nullable(),
  last_seen: z.string().nullable(),
  last_sync: z.string().nullable(),
  secret_rotated_at: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A device as the API shows it: never a credential; the metrics report apart from metadata. */
export function deviceJson(device: DeviceRecord): z.infer<typeof deviceResponse> {
  const { metrics, ...metadata } = device.metadata;
  return {
    device_id: device.deviceId,
    device_name: device.deviceName,
    device_type: device.deviceType,
    location: device.location,
    status: device.status as (typeof DEVICE_STATUSES)[number],
    firmware_version: device.firmwareVersion,
    metadata,
    metrics:
      metrics !== null && typeof metrics === 'object' && !Array.isArray(metrics)
        ? (metrics as Record<string, unknown>)
        : null,
    registration_key_id: device.registrationKeyId,
    last_seen: isoOrNull(device.lastSeen),
    last_sync: isoOrNull(device.lastSync),
    secret_rotated_at: isoOrNull(device.secretRotatedAt),
    previous_secret_expires_at: isoOrNull(device.previousSecretExpiresAt),
    created_at: device.createdAt.toISOString(),
    updated_at: device.updatedAt.toISOString(),
  };
}

const notFound = (deviceId: string) =>
  new Problem(404, 'DEVICE_NOT_FOUND', `no device '${deviceId}'`);

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Keyset cursor of the device list: the last device id. */
const encodeCursor = (deviceId: string) => Buffer.from(deviceId).toString('base64url');

function decodeCursor(cursor: string): string {
  const deviceId = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!deviceIdField.safeParse(deviceId).success)
    throw new Problem(400, 'INVALID_CURSOR', 'the cursor is not one this API returned');
  return deviceId;
}

/**
 * Who may register: an admin token (the `Authorization` header, checked like any request),
 * or — without that header — a registration key in the body. Returns the key's hash when a
 * key is to be used.
 */
async function registrationAuthority(
  ctx: GatewayContext,
  request: FastifyRequest,
  registrationKey: string | undefined,
): Promise<{ keyHash?: string; actor: CommandActor }> {
  if (request.headers.authorization !== undefined) {
    const principal = await authenticate(ctx.auth, {
      authorization: request.headers.authorization,
      timestamp: header(request, 'x-saffron-timestamp'),
      nonce: header(request, 'x-saffron-nonce'),
      method: request.method,
      pathWithQuery: request.url,
      body: rawBody(request),
    });
    requireRole(principal, ['admin']);
    return { actor: auditActor(principal, request) };
  }
  if (registrationKey === undefined)
    throw new Problem(
      401,
      'AUTH_REQUIRED',
      'registering a device needs an admin token or a registration key',
      {},
      { 'www-authenticate': 'Bearer' },
    );
  if (!REGISTRATION_KEY_PATTERN.test(registrationKey)) throw invalidKey();
  return {
    keyHash: credentialHash(registrationKey),
    actor: { actor: 'registration-key', role: 'registration_key', sourceIp: request.ip },
  };
}

const invalidKey = () =>
  new Problem(
    401,
    'INVALID_REGISTRATION_KEY',
    'the registration key is unknown, revoked, expired or used up',
  );

/**
 * A rotation a device asks for itself must be signed with its current secret: a previous
 * secret still in its grace period must not be able to mint a fresh one.
 */
function requireCurrentSecret(
  ctx: GatewayContext,
  request: FastifyRequest,
  sealedSecret: string,
): void {
  const authorization = request.headers.authorization ?? '';
  const signature = authorization.slice(authorization.lastIndexOf(':') + 1);
  const valid = verifyRequestSignature(
    ctx.keys.open(sealedSecret),
    {
      method: request.method,
      pathWithQuery: request.url,
      timestamp: header(request, 'x-saffron-timestamp') ?? '',
      nonce: header(request, 'x-saffron-nonce') ?? '',
      body: rawBody(request),
    },
    signature,
  );
  if (!valid)
    throw new Problem(
      403,
      'CURRENT_SECRET_REQUIRED',
      'a device must sign its rotation request with its current secret',
    );
}

/** Register the device routes. */
export function registerDeviceRoutes(ctx: GatewayContext): void {
  const gauges = createDeviceGauges(ctx.metrics);

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/devices/register',
      summary:
        'register a device (admin bearer token, or a registration key in the body); the secret is shown once',
      tags: ['devices'],
      responseHeaders: {
        'Cache-Control': { description: 'no-store: the secret is shown once', required: true },
      },
      access: { public: true },
      body: registerBody,
      response: registerResponse,
      status: 201,
    },
    // the body is validated before the caller is known: the registration key travels in it
    async ({ body, request, reply }) => {
      const { keyHash, actor } = await registrationAuthority(ctx, request, body.registration_key);
      const deviceId = body.device_id ?? `dev-${randomUUID()}`;
      const apiKey = newApiKey();
      const secret = newDeviceSecret();
      const now = ctx.now();
      try {
        await ctx.changes.transaction(async (tx, changed) => {
          let registrationKeyId: string | undefined;
          if (keyHash !== undefined) {
            const key = await consumeRegistrationKey(tx, keyHash, now);
            if (!key) throw invalidKey();
            if (key.deviceType !== null && key.deviceType !== body.device_type)
              throw new Problem(
                403,
                'REGISTRATION_KEY_SCOPE',
                `this registration key only registers devices of type '${key.deviceType}'`,
              );
            registrationKeyId = key.keyId;
          }
          await insertDevice(
            tx,
            {
              deviceId,
              deviceName: body.device_name,
              deviceType: body.device_type,
              location: body.location,
              ...(body.firmware_version !== undefined
                ? { firmwareVersion: body.firmware_version }
                : {}),
              ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
              apiKeyHash: credentialHash(apiKey),
              secretCiphertext: ctx.keys.seal(secret),
              ...(registrationKeyId !== undefined ? { registrationKeyId } : {}),
            },
            now,
          );
          await appendCommandAudit(
            tx,
            registrationKeyId === undefined
              ? actor
              : { ...actor, actor: `registration-key:${registrationKeyId}` },
            [
              {
                event: 'DEVICE_REGISTERED',
                deviceId,
                details: { device_type: body.device_type, location: body.location },
              },
            ],
            now,
          );
          // a gateway may still hold the secrets of a device deleted under this id
          await changed({ kind: 'devices', deviceIds: [deviceId] });
        });
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(409, 'DEVICE_EXISTS', `device '${deviceId}' is already registered`);
        throw error;
      }
      reply.header('cache-control', 'no-store');
      return { device_id: deviceId, api_key: apiKey, device_secret: secret };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/devices',
      summary: 'list devices (filter by status, type, location; keyset pages of up to 500)',
      tags: ['devices'],
      access: { roles: READ },
      query: listQuery,
      response: z.object({ devices: z.array(deviceResponse), next_cursor: z.string().nullable() }),
    },
    async ({ query }) => {
      const devices = await listDevices(ctx.store, {
        ...(query.status ? { status: query.status } : {}),
        ...(query.device_type ? { deviceType: query.device_type } : {}),
        ...(query.location ? { location: query.location } : {}),
        limit: query.limit,
        ...(query.cursor !== undefined ? { after: decodeCursor(query.cursor) } : {}),
      });
      const last = devices.at(-1);
      return {
        devices: devices.map(deviceJson),
        next_cursor: devices.length === query.limit && last ? encodeCursor(last.deviceId) : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/devices/:device_id',
      summary: 'a device (operators, or the device itself)',
      tags: ['devices'],
      access: { roles: READ, devices: true },
      params: deviceParams,
      response: deviceResponse,
    },
    async ({ params, principal }) => {
      requireDeviceOrRole(principal, params.device_id, READ);
      const device = await getDevice(ctx.store, params.device_id);
      if (!device) throw notFound(params.device_id);
      return deviceJson(device);
    },
  );

  route(
    ctx,
    {
      method: 'PATCH',
      url: '/api/v1/devices/:device_id',
      summary: "change a device's name, type, location, firmware version or metadata",
      tags: ['devices'],
      access: { roles: MANAGE },
      params: deviceParams,
      body: updateBody,
      response: deviceResponse,
    },
    async ({ params, body, principal, request }) => {
      const now = ctx.now();
      const device = await ctx.changes.transaction(async (tx, changed) => {
        const updated = await updateDevice(
          tx,
          params.device_id,
          {
            ...(body.device_name !== undefined ? { deviceName: body.device_name } : {}),
            ...(body.device_type !== undefined ? { deviceType: body.device_type } : {}),
            ...(body.location !== undefined ? { location: body.location } : {}),
            ...(body.firmware_version !== undefined
              ? { firmwareVersion: body.firmware_version }
              : {}),
            ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
          },
          now,
        );
        if (updated)
          await appendCommandAudit(
            tx,
            auditActor(principal, request),
            [
              {
                event: 'DEVICE_UPDATED',
                deviceId: params.device_id,
                details: { fields: Object.keys(body) },
              },
            ],
            now,
          );
        // its type selects a configuration layer: cached documents of it are dropped
        if (updated) await changed({ kind: 'devices', deviceIds: [params.device_id] });
        return updated;
      });
      if (!device) throw notFound(params.device_id);
      return deviceJson(device);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/devices/:device_id',
      status: 204,
      summary: 'delete a device with its commands, assignments and device-scoped config',
      tags: ['devices'],
      access: { roles: ['admin'] },
      params: deviceParams,
    },
    async ({ params, principal, request }) => {
      const deleted = await ctx.changes.transaction(async (tx, changed) => {
        const gone = await deleteDevice(tx, params.device_id);
        if (gone) {
          await appendCommandAudit(
            tx,
            auditActor(principal, request),
            [{ event: 'DEVICE_DELETED', deviceId: params.device_id }],
            ctx.now(),
          );
          // every gateway drops its credentials: the device is refused from the commit on
          await changed({ kind: 'devices', deviceIds: [params.device_id] });
        }
        return gone;
      });
      if (!deleted) throw notFound(params.device_id);
      gauges.forget(params.device_id);
      return undefined;
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/devices/:device_id/rotate-secret',
      summary:
        'issue a new device secret (shown once); the previous one stays valid for a grace period (default 24 h)',
      tags: ['devices'],
      responseHeaders: {
        'Cache-Control': { description: 'no-store: the secret is shown once', required: true },
      },
      access: { roles: ['admin'], devices: true },
      params: deviceParams,
      body: rotateBody,
      response: z.object({
        device_id: z.string(),
        device_secret: z.string(),
        rotated_at: z.string(),
        previous_secret_expires_at: z.string(),
      }),
    },
    async ({ params, body, principal, request, reply }) => {
      requireDeviceOrRole(principal, params.device_id, ['admin']);
      const current = await getDeviceSecret(ctx.store, params.device_id);
      if (!current) throw notFound(params.device_id);
      if (current.secretCiphertext === null)
        throw new Problem(409, 'DEVICE_HAS_NO_SECRET', 'the device has no secret to rotate');
      if (principal.kind === 'device') requireCurrentSecret(ctx, request, current.secretCiphertext);
      const secret = newDeviceSecret();
      const now = ctx.now();
      const grace = body?.grace_period_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS;
      const previousExpiresAt = new Date(now.getTime() + grace * 1000);
      const expected = current.secretCiphertext;
      const rotated = await ctx.changes.transaction(async (tx, changed) => {
        const swapped = await rotateDeviceSecret(
          tx,
          { deviceId: params.device_id, expected, next: ctx.keys.seal(secret), previousExpiresAt },
          now,
        );
        if (!swapped) return false;
        await appendCommandAudit(
          tx,
          auditActor(principal, request),
          [
            {
              event: 'DEVICE_SECRET_ROTATED',
              deviceId: params.device_id,
              details: { previous_secret_expires_at: previousExpiresAt.toISOString() },
            },
          ],
          now,
        );
        // every gateway drops the credentials it holds: the new secret works at once
        await changed({ kind: 'devices', deviceIds: [params.device_id] });
        return true;
      });
      if (!rotated)
        throw new Problem(
          409,
          'ROTATION_CONFLICT',
          'the secret changed during this rotation (a concurrent rotation won); retry',
        );
      reply.header('cache-control', 'no-store');
      return {
        device_id: params.device_id,
        device_secret: secret,
        rotated_at: now.toISOString(),
        previous_secret_expires_at: previousExpiresAt.toISOString(),
      };
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/devices/:device_id/metrics',
      status: 204,
      summary:
        'report device metrics (the device itself): disk, memory, SAF backlog, sync, network',
      tags: ['devices'],
      access: { roles: [], devices: true },
      params: deviceParams,
      body: metricsBody,
    },
    async ({ params, body, principal }) => {
      requireDeviceOrRole(principal, params.device_id, []);
      const now = ctx.now();
      const stored = await recordDeviceMetrics(
        ctx.store,
        params.device_id,
        { ...body, reported_at: now.toISOString() },
        now,
      );
      if (!stored) throw notFound(params.device_id);
      gauges.report(params.device_id, body);
      return undefined;
    },
  );
}
