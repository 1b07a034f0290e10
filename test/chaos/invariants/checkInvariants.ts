/**
 * Every invariant of the chaos run, computed after the agents and the cloud stopped: the
 * device files are read once, the cloud's rows once per table, and each check compares them
 * with the other sources it needs (the agents' command log, the webhook receiver).
 */
import type { CloudStore } from '../../../runtime/index.js';
import type { WebhookReceiver } from '../webhookReceiver.js';
import { checkAcceptedOnce } from './acceptedOnce.js';
import { checkAudit } from './audit.js';
import { checkCommands, readCommands } from './commands.js';
import { readDeviceFacts, type DeviceFacts } from './deviceFiles.js';
import type { InvariantResult } from './invariant.js';
import { checkSafExactlyOnce } from './safExactlyOnce.js';
import { checkSummaries } from './summaries.js';
import { checkWebhooks } from './webhooks.js';
import { checkWorkflows, readCloudWorkflows } from './workflows.js';

/** What the checks read. */
export interface InvariantInputs {
  /** The cloud database (the cloud stopped). */
  store: CloudStore;
  /** Every terminal with its SQLite file (the agents stopped). */
  devices: readonly { deviceId: string; dbFile: string }[];
  /** Handler runs the agents logged, by `<device>|<command id>`. */
  executions: ReadonlyMap<string, number>;
  receiver: WebhookReceiver;
  webhookIds: readonly string[];
  /** Idempotency keys of the cloud workflow starts the API confirmed. */
  startedKeys: readonly string[];
}

/** Compute every invariant. */
export async function checkInvariants(inputs: InvariantInputs): Promise<InvariantResult[]> {
  const { store, devices } = inputs;
  const facts: DeviceFacts[] = [];
  for (const d of devices) facts.push(await readDeviceFacts(d.deviceId, d.dbFile));
  const workflows = await readCloudWorkflows(store);
  const commands = await readCommands(store);
  return [
    await checkSafExactlyOnce(store, devices, facts),
    await checkAcceptedOnce(store, facts, inputs.receiver, inputs.webhookIds[0]),
    await checkWorkflows(store, workflows, facts, inputs.startedKeys),
    checkCommands(commands, facts, inputs.executions),
    await checkWebhooks(store, inputs.receiver, inputs.webhookIds, workflows, commands),
    await checkAudit(store, workflows, commands, facts),
    await checkSummaries(store, facts),
  ];
}
