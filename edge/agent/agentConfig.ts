/**
 * The agent's configuration sync: resolve the cloud key to verify with (a provisioned one, the
 * pinned one, or — first start — the cloud's, fetched and pinned), then start the config sync
 * with the agent's checks and hot-reload:
 *
 * - checks before a device configuration is accepted: its `store_and_forward` limits parse
 *   and every workflow definition it carries loads (configWorkflows.ts); a failure refuses
 *   the whole document and the last good one stays;
 * - hot-reload after it is stored: the workflows it carries are deployed when they changed,
 *   and the WASM binaries of its WASM assignments and of every loaded definition are fetched
 *   in the background when missing.
 *
 * A device that has never pinned a key and starts without a network cannot check anything
 * yet: it takes payments on its installed definitions, and key resolution is retried in the
 * background (backoff with jitter) until the cloud answers.
 */
import { SaffronError, type JsonObject } from '../../runtime/index.js';
import { createConfigSync } from '../config/configSync.js';
import type { VerifiedConfig } from '../config/documents.js';
import { resolveCloudPublicKey } from '../config/pinPublicKey.js';
import { safLimitsFromConfig } from '../saf/safLimits.js';
import { backoffDelay } from '../../runtime/index.js';
import { wasmHashesOf } from '../wasm/wasmHashes.js';
import { configEntry } from './agentLog.js';
import { prefetchMissing, type AgentContext, type AgentParts } from './agentParts.js';
import { applyConfigWorkflows, checkConfigWorkflows } from './configWorkflows.js';

/** The hashes of a configuration document's WASM assignments. */
function assignedWasm(config: VerifiedConfig): string[] {
  const assignments = config.document.assignments;
  if (!Array.isArray(assignments)) return [];
  return assignments
    .filter(
      (a): a is { assignment_type: 'WASM'; target_id: string } =>
        a !== null &&
        typeof a === 'object' &&
        (a as { assignment_type?: unknown }).assignment_type === 'WASM' &&
        typeof (a as { target_id?: unknown }).target_id === 'string',
    )
    .map((a) => a.target_id);
}

/** Hot-reload an applied document (see the module comment). */
async function hotReload(parts: AgentParts, ctx: AgentContext, config: VerifiedConfig) {
  if (config.name !== 'device') return;
  for (const deployed of await applyConfigWorkflows(
    parts.store,
    parts.catalog,
    config.content,
    ctx.now(),
  ))
    ctx.log({
      level: 'info',
      event: 'edge.workflow.deployed',
      msg: `workflow ${deployed.workflowType} ${deployed.workflowVersion ?? ''} deployed from the configuration`,
      definition_hash: deployed.definitionHash,
    });
  prefetchMissing(parts, ctx, [
    ...assignedWasm(config),
    ...wasmHashesOf(parts.catalog.entries().map((e) => e.definition)),
  ]);
}

/**
 * Start the config sync of `parts` (see the module comment). `current()` says whether these
 * parts are still the running agent's, so a retry scheduled before a stop does nothing.
 * Throws only what retrying cannot fix (a provisioned key that is not an Ed25519 key).
 */
export async function startAgentConfig(
  parts: AgentParts,
  ctx: AgentContext,
  current: () => boolean,
  failures = 0,
): Promise<void> {
  if (!current()) return;
  if (failures === 0 && ctx.options.cloudPublicKeyPem === undefined)
    ctx.log({
      level: 'warn',
      event: 'edge.config.key_not_provisioned',
      msg: 'no cloud public key provisioned: the key the cloud gives on first contact is pinned and trusted; provision it (--cloud-public-key) so nothing is pinned blind',
    });
  let publicKeyPem: string;
  try {
    publicKeyPem = (
      await resolveCloudPublicKey({
        store: parts.store,
        cloud: parts.connectivity.client,
        ...(ctx.options.cloudPublicKeyPem !== undefined
          ? { configuredPem: ctx.options.cloudPublicKeyPem }
          : {}),
        now: ctx.now,
      })
    ).publicKeyPem;
  } catch (error) {
    if (!(error instanceof SaffronError && error.retryable)) throw error;
    const delay = backoffDelay(
      { baseMs: 1_000, maxMs: ctx.maxBackoffMs },
      failures + 1,
      ctx.random,
    );
    ctx.log({
      level: 'warn',
      event: 'edge.config.key_unavailable',
      msg: `cloud public key not pinned yet and the cloud is unreachable; configuration sync starts once it answers (retry in ${delay} ms)`,
    });
    ctx.later(delay, () => {
      startAgentConfig(parts, ctx, current, failures + 1).catch((e: unknown) =>
        ctx.fail('edge.config.failed', 'configuration sync did not start', e),
      );
    });
    return;
  }
  if (!current()) return;
  parts.cloudKey = publicKeyPem;
  const config = createConfigSync({
    store: parts.store,
    cloud: parts.connectivity.client,
    publicKeyPem,
    validate: async (c) => {
      if (c.name !== 'device') return;
      safLimitsFromConfig(c.content as JsonObject);
      await checkConfigWorkflows(parts.catalog, c.content);
    },
    onApplied: (c) => hotReload(parts, ctx, c),
    onEvent: (event) => ctx.log(configEntry(event)),
    retry: { baseMs: 1_000, maxMs: ctx.maxBackoffMs },
    now: ctx.now,
    timers: ctx.timers,
    random: ctx.random,
  });
  parts.config = config;
  await config.start();
}
