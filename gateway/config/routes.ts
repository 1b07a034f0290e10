/**
 * Signed device configuration. Operators publish configuration layers per
 * fleet (scope key `*`), device type and device — each `PUT` a new version, held for approval
 * when a policy covers configuration pushes (the shipped default holds a non-admin's) — and a device
 * pulls the merge of the layers that apply to it (fleet ← device type ← device, RFC 7386
 * merge patch; see config/mergeLayers.ts) as a signed document, and its fraud rules the same
 * way. Both answer `If-None-Match` with 304 and no body — from the ETag this gateway holds
 * in memory when it has one (config/documentTags.ts), without a statement. The public key that verifies the
 * signatures is at `/api/v1/config/public-key`. A layer's `workflows` definitions are signed
 * one by one when it is published (link/signDefinitions.ts), so a device can tell a
 * definition the cloud accepted from one written into the database another way.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { CONFIG_SCOPES, ConflictError } from '../../runtime/index.js';
import { listAssignments } from './store/assignments/listAssignments.js';
import { type ConfigLayerRecord } from './store/configs/configLayer.js';
import { getConfigLayer } from './store/configs/getConfigLayer.js';
import { getDeviceConfigLayers } from './store/configs/getDeviceConfigLayers.js';
import { selectFraudPolicies } from './store/policies/selectFraudPolicies.js';
import { getDevice } from '../devices/store/devices/getDevice.js';
import { auditActor } from '../auditActor.js';
import { requireDeviceOrRole } from '../auth/principal.js';
import { answerNotModified, answerSigned, tagged } from './answerSigned.js';
import { deviceConfigDocument, fraudRulesDocument } from './documents.js';
import { publishLayer } from './publishLayer.js';
import type { GatewayContext } from '../context.js';
import { HELD_RESPONSE, HELD_SUMMARY, replyHeld } from '../fleet/heldReply.js';
import { holdConfigPush } from '../governance/heldConfigLayers.js';
import {
  deviceIdField,
  deviceParams,
  deviceTypeField,
  jsonObjectField,
  versionQueryField,
} from '../fields.js';
import { signConfigDefinitions } from '../link/signDefinitions.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const PUBLISH = ['admin', 'operator'] as const;

/** `{scope}/{scope_key}`: fleet takes `*`, device_type a type, device a device id. */
const layerParams = z
  .strictObject({ scope: z.enum(CONFIG_SCOPES), scope_key: z.string().min(1).max(200) })
  .superRefine((p, issues) => {
    const ok =
      p.scope === 'fleet'
        ? p.scope_key === '*'
        : p.scope === 'device_type'
          ? deviceTypeField.safeParse(p.scope_key).success
          : deviceIdField.safeParse(p.scope_key).success;
    if (!ok)
      issues.addIssue({
        code: 'custom',
        path: ['scope_key'],
        message:
          p.scope === 'fleet'
            ? "the fleet scope's key is '*'"
            : `not a valid ${p.scope === 'device' ? 'device id' : 'device type'}`,
      });
  });

const layerResponse = z.object({
  scope: z.enum(CONFIG_SCOPES),
  scope_key: z.string(),
  version: z.number(),
  config: jsonObjectField,
  checksum: z.string(),
  current: z.boolean(),
  created_by: z.string().nullable(),
  created_at: z.string(),
});

const layerJson = (layer: ConfigLayerRecord): z.infer<typeof layerResponse> => ({
  scope: layer.scope,
  scope_key: layer.scopeKey,
  version: layer.version,
  config: layer.config,
  checksum: layer.checksum,
  current: layer.current,
  created_by: layer.createdBy,
  created_at: layer.createdAt.toISOString(),
});

const signedDocument = z
  .object({ type: z.string(), checksum: z.string(), signature: z.string() })
  .catchall(z.unknown());

/** The device config document (gateway/config/documents.ts), as sent. */
const deviceConfigResponse = signedDocument.extend({
  type: z.literal('saffron.device-config.v1'),
  device_id: z.string(),
  version: z.string().meta({ description: 'f<fleet>.t<device type>.d<device> layer versions' }),
  layers: z.array(
    z.object({ scope: z.enum(CONFIG_SCOPES), scope_key: z.string(), version: z.number() }),
  ),
  assignments: z.array(
    z.object({ assignment_type: z.string(), target_id: z.string(), parameters: jsonObjectField }),
  ),
  config: jsonObjectField,
});

/** The fraud rules document (gateway/config/documents.ts), as sent. */
const fraudRulesResponse = signedDocument.extend({
  type: z.literal('saffron.fraud-rules.v1'),
  device_id: z.string().nullable(),
  selection: z.enum(['assigned', 'fleet_default']),
  policies: z.array(z.object({ name: z.string(), version: z.number() })),
  rules: z.array(
    z
      .object({ policy: z.string(), policy_version: z.number() })
      .catchall(z.unknown())
      .meta({ description: 'a rule of a selected fraud policy, naming its policy and version' }),
  ),
});

/** Conditional GET of a signed document: what the request may send and the answers get. */
const conditional = {
  headers: z.object({
    'if-none-match': z
      .string()
      .optional()
      .meta({ description: 'the ETag (or version) the device holds; a match answers 304' }),
  }),
  responseHeaders: {
    ETag: { description: 'strong tag of the signed document', required: true },
    'Cache-Control': { description: 'private, no-cache', required: true },
  },
  otherResponses: {
    304: {
      description: 'the held version is current; no body',
      headers: {
        ETag: { description: 'strong tag of the signed document', required: true },
        'Cache-Control': { description: 'private, no-cache', required: true },
      },
    },
  },
} as const;

/** Register the configuration routes. */
export function registerConfigRoutes(ctx: GatewayContext): void {
  const publicKeyDer = createPublicKey(ctx.keys.publicKeyPem).export({
    type: 'spki',
    format: 'der',
  });
  const publicKey = {
    algorithm: 'Ed25519' as const,
    public_key_pem: ctx.keys.publicKeyPem,
    key_id: createHash('sha256').update(publicKeyDer).digest('hex'),
  };

  route(
    ctx,
    {
      method: 'PUT',
      url: '/api/v1/config/:scope/:scope_key',
      summary:
        'publish a new version of a configuration layer (fleet `*`, a device type or a device); the body is the layer; ' +
        HELD_SUMMARY,
      tags: ['config'],
      access: { roles: PUBLISH },
      params: layerParams,
      body: jsonObjectField,
      response: layerResponse,
      otherResponses: HELD_RESPONSE,
    },
    async ({ params, body: given, principal, request, reply }) => {
      if (params.scope === 'device' && !(await getDevice(ctx.store, params.scope_key)))
        throw new Problem(404, 'DEVICE_NOT_FOUND', `no device '${params.scope_key}'`);
      // the workflow definitions it carries are signed as the cloud accepts them
      const body = signConfigDefinitions(ctx.keys, given);
      const layer = {
        scope: params.scope,
        scopeKey: params.scope_key,
        config: body,
        createdBy: principal.kind === 'user' ? principal.name : principal.deviceId,
      };
      // a configuration push: held for approval when a policy says so (governance/)
      const held = await holdConfigPush(ctx, layer, auditActor(principal, request));
      if (held) return replyHeld(reply, held);
      try {
        const published = await ctx.changes.transaction((tx, changed) =>
          publishLayer(tx, changed, ctx.keys, layer, ctx.now()),
        );
        return layerJson(published);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(
            409,
            'VERSION_CONFLICT',
            'another version of this layer was published at the same time; retry',
          );
        throw error;
      }
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/config/:scope/:scope_key',
      summary: 'a configuration layer: the current version, or ?version=n',
      tags: ['config'],
      access: { roles: READ },
      params: layerParams,
      query: z.strictObject({ version: versionQueryField.optional() }),
      response: layerResponse,
    },
    async ({ params, query }) => {
      const layer = await getConfigLayer(ctx.store, params.scope, params.scope_key, query.version);
      if (!layer)
        throw new Problem(
          404,
          'CONFIG_NOT_FOUND',
          `no ${params.scope} configuration '${params.scope_key}'${query.version ? ` version ${query.version}` : ''}`,
        );
      return layerJson(layer);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/devices/:device_id/config',
      summary:
        "a device's effective configuration, signed (ETag; If-None-Match → 304); the device itself or operators",
      tags: ['config'],
      access: { roles: READ, devices: true },
      params: deviceParams,
      ...conditional,
      response: deviceConfigResponse,
    },
    async ({ params, principal, request, reply }) => {
      requireDeviceOrRole(principal, params.device_id, READ);
      const tags = ctx.documentTags.config;
      const known = tags.get(params.device_id);
      if (known !== undefined) {
        const unchanged = answerNotModified(request, reply, known);
        if (unchanged) return unchanged;
      }
      const document = await tags.fill(
        params.device_id,
        async () => {
          const device = await getDevice(ctx.store, params.device_id);
          if (!device)
            throw new Problem(404, 'DEVICE_NOT_FOUND', `no device '${params.device_id}'`);
          const [layers, assignments] = await Promise.all([
            getDeviceConfigLayers(ctx.store, device),
            listAssignments(ctx.store, device.deviceId),
          ]);
          return tagged(deviceConfigDocument(device.deviceId, layers, assignments));
        },
        (built) => built.etag,
      );
      return answerSigned(ctx.keys, request, reply, document);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/config/fraud-rules',
      summary:
        "the calling device's fraud rules, signed (ETag; If-None-Match → 304); operators may pass ?device_id",
      tags: ['config'],
      access: { roles: READ, devices: true },
      query: z.strictObject({ device_id: deviceIdField.optional() }),
      ...conditional,
      response: fraudRulesResponse,
    },
    async ({ query, principal, request, reply }) => {
      let deviceId = query.device_id;
      if (principal.kind === 'device') {
        if (deviceId !== undefined && deviceId !== principal.deviceId)
          throw new Problem(403, 'FORBIDDEN', 'a device may only use its own resources');
        deviceId = principal.deviceId;
      }
      const tags = ctx.documentTags.fraudRules;
      const known = tags.get(deviceId ?? '');
      if (known !== undefined) {
        const unchanged = answerNotModified(request, reply, known);
        if (unchanged) return unchanged;
      }
      const document = await tags.fill(
        deviceId ?? '',
        async () => {
          if (principal.kind !== 'device' && deviceId !== undefined)
            if (!(await getDevice(ctx.store, deviceId)))
              throw new Problem(404, 'DEVICE_NOT_FOUND', `no device '${deviceId}'`);
          const selected = await selectFraudPolicies(ctx.store, deviceId);
          return tagged(fraudRulesDocument(deviceId ?? null, selected));
        },
        (built) => built.etag,
      );
      return answerSigned(ctx.keys, request, reply, document);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/config/public-key',
      summary: "the cloud's Ed25519 public key that verifies configuration signatures",
      tags: ['config'],
      access: { roles: READ, devices: true },
      response: z.object({
        algorithm: z.literal('Ed25519'),
        public_key_pem: z.string(),
        key_id: z.string(),
      }),
    },
    () => Promise.resolve(publicKey),
  );
}
