/**
 * Registration keys (admins only): enrollment credentials a device presents to
 * `POST /api/v1/devices/register` instead of an admin token. A key is shown once at creation
 * and stored as its SHA-256; it may be limited to one device type and a number of uses, and
 * it expires (default 30 days). Revoking a key stops new registrations; devices already
 * registered with it are unaffected (they hold their own secrets).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { insertRegistrationKey } from '../devices/store/registrationKeys/insertRegistrationKey.js';
import { listRegistrationKeys } from '../devices/store/registrationKeys/listRegistrationKeys.js';
import { type RegistrationKeyRecord } from '../devices/store/registrationKeys/registrationKey.js';
import { revokeRegistrationKey } from '../devices/store/registrationKeys/revokeRegistrationKey.js';
import { credentialHash, newRegistrationKey } from '../auth/credentials.js';
import type { GatewayContext } from '../context.js';
import { deviceTypeField, isoOrNull } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

const DEFAULT_EXPIRY_SECONDS = 30 * 24 * 3600;

const createBody = z.strictObject({
  name: z.string().min(1).max(200),
  device_type: deviceTypeField.optional(),
  max_uses: z.number().int().min(1).max(1_000_000).optional(),
  expires_in_seconds: z
    .number()
    .int()
    .min(60)
    .max(365 * 24 * 3600)
    .optional(),
});

const keyResponse = z.object({
  key_id: z.string(),
  name: z.string(),
  key_prefix: z.string().nullable(),
  device_type: z.string().nullable(),
  max_uses: z.number().nullable(),
  use_count: z.number(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

const keyJson = (key: RegistrationKeyRecord): z.infer<typeof keyResponse> => ({
  key_id: key.keyId,
  name: key.name,
  key_prefix: key.keyPrefix,
  device_type: key.deviceType,
  max_uses: key.maxUses,
  use_count: key.useCount,
  created_by: key.createdBy,
  created_at: key.createdAt.toISOString(),
  last_used_at: isoOrNull(key.lastUsedAt),
  expires_at: isoOrNull(key.expiresAt),
  revoked_at: isoOrNull(key.revokedAt),
});

/** Register the registration-key routes. */
export function registerRegistrationKeyRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/registration-keys',
      summary: 'create a device registration key (shown once)',
      tags: ['devices'],
      responseHeaders: {
        'Cache-Control': { description: 'no-store: the secret is shown once', required: true },
      },
      access: { roles: ['admin'] },
      body: createBody,
      response: keyResponse.extend({ registration_key: z.string() }),
      status: 201,
    },
    async ({ body, principal, reply }) => {
      const key = newRegistrationKey();
      const now = ctx.now();
      const record = await insertRegistrationKey(
        ctx.store,
        {
          keyId: randomUUID(),
          name: body.name,
          keyHash: credentialHash(key),
          keyPrefix: key.slice(0, 12),
          ...(body.device_type !== undefined ? { deviceType: body.device_type } : {}),
          ...(body.max_uses !== undefined ? { maxUses: body.max_uses } : {}),
          expiresAt: new Date(
            now.getTime() + (body.expires_in_seconds ?? DEFAULT_EXPIRY_SECONDS) * 1000,
          ),
          createdBy: principal.kind === 'user' ? principal.name : principal.deviceId,
        },
        now,
      );
      reply.header('cache-control', 'no-store');
      return { ...keyJson(record), registration_key: key };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/registration-keys',
      summary: 'list registration keys (never the keys themselves)',
      tags: ['devices'],
      access: { roles: ['admin'] },
      response: z.object({ registration_keys: z.array(keyResponse) }),
    },
    async () => ({ registration_keys: (await listRegistrationKeys(ctx.store)).map(keyJson) }),
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/registration-keys/:key_id',
      status: 204,
      summary: 'revoke a registration key',
      tags: ['devices'],
      access: { roles: ['admin'] },
      params: z.strictObject({ key_id: z.uuid() }),
    },
    async ({ params }) => {
      if (!(await revokeRegistrationKey(ctx.store, params.key_id, ctx.now())))
        throw new Problem(
          404,
          'REGISTRATION_KEY_NOT_FOUND',
          `no registration key ${params.key_id}`,
        );
      return undefined;
    },
  );
}
