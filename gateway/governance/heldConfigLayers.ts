/**
 * Configuration pushes held for approval. A layer publish (`PUT /api/v1/config/{scope}/
 * {scope_key}`) reaches every device it applies to at their next poll, and a device layer may
 * carry workflow definitions: it is judged by the policies as an UPDATE_CONFIG command
 * (commandGate.ts), and when one holds it nothing is published — no new version exists for a
 * device to fetch — only its approval, carrying the layer. When the approval is granted the
 * layer is published in the decision's transaction, as published by its requester, signed and
 * announced exactly as a direct publish (config/publishLayer.ts); its version number is the
 * next one at that moment.
 */
import { z } from 'zod';
import { CONFIG_SCOPES, type CacheChange, type CloudHandle } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { type ConfigLayerRecord } from '../config/store/configs/configLayer.js';
import { type ApprovalRecord } from './store/approvals/index.js';
import { publishLayer, type LayerToPublish } from '../config/publishLayer.js';
import type { GatewayContext } from '../context.js';
import type { Keyring } from '../keys.js';
import { CONFIG_PUSH_COMMAND_TYPE, gateConfigPush } from './commandGate.js';
import { requesterOf } from './roles.js';
import { heldTerms, heldTermsShape, requestApproval } from './requestApproval.js';

/** The request a configuration push approval holds (command_approvals.command_request). */
export const heldConfigLayerSchema = z.object({
  kind: z.literal('config_layer'),
  scope: z.enum(CONFIG_SCOPES),
  scope_key: z.string(),
  config: z.record(z.string(), z.unknown()),
  ...heldTermsShape,
  /** The device a device layer is for (absent for fleet and device-type layers). */
  device_id: z.string().optional(),
});
/** A held configuration push. */
export type HeldConfigLayer = z.output<typeof heldConfigLayerSchema>;

/**
 * Judge publishing `layer` by `actor`; when a policy holds it, hold it (its approval, PENDING,
 * with the audit row and the `approval.requested` event) and return the approval. Undefined:
 * publish it now.
 */
export async function holdConfigPush(
  ctx: GatewayContext,
  layer: LayerToPublish,
  actor: CommandActor,
): Promise<ApprovalRecord | undefined> {
  const now = ctx.now();
  const { risk, approval: terms } = await gateConfigPush(ctx.store, layer, requesterOf(actor), now);
  if (!terms) return undefined;
  const held: HeldConfigLayer = {
    kind: 'config_layer',
    scope: layer.scope,
    scope_key: layer.scopeKey,
    config: layer.config,
    ...heldTerms(terms, risk, actor.role),
    ...(layer.scope === 'device' ? { device_id: layer.scopeKey } : {}),
  };
  return ctx.store.transaction((tx) =>
    requestApproval(
      tx,
      {
        held,
        terms,
        commandType: CONFIG_PUSH_COMMAND_TYPE,
        risk,
        details: { config_scope: layer.scope, scope_key: layer.scopeKey },
      },
      actor,
      now,
    ),
  );
}

/** Publish the held layer now that `approval` is granted; inside the decision's transaction. */
export function releaseConfigLayer(
  tx: CloudHandle,
  changed: (change: CacheChange) => Promise<void>,
  keys: Keyring,
  approval: ApprovalRecord,
  held: HeldConfigLayer,
  now: Date,
): Promise<ConfigLayerRecord> {
  return publishLayer(
    tx,
    changed,
    keys,
    {
      scope: held.scope,
      scopeKey: held.scope_key,
      config: held.config,
      createdBy: approval.requestedBy,
    },
    now,
  );
}
