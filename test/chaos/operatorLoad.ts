/**
 * What operators do during the chaos run, through the admin API: start cloud workflows
 * (each with an idempotency key, so a start repeated after a dead gateway or a database
 * restart is the same workflow), send single commands to random terminals, start a
 * DIAGNOSTIC broadcast to the whole fleet, and register the webhooks whose deliveries the
 * run checks. Commands get generous retries and lifetimes: the run's outages are short,
 * and a command the cloud gives up on would hide whether the device ran it.
 */
import type { AdminApi } from './adminApi.js';
import { CLOUD_FLOW_TYPE } from './cloudFlow.js';
import type { WebhookReceiver } from './webhookReceiver.js';

/** Redeliveries allowed per command (the API's maximum). */
const COMMAND_RETRIES = 20;
/** Lifetime of a command (longer than any run). */
const COMMAND_TTL_SECONDS = 3_600;

/** Cloud workflows started at an even pace over `durationMs`. */
export interface WorkflowStarts {
  /** Idempotency keys of the starts that the API confirmed. */
  confirmed: string[];
  /** Starts that failed for good (after retrying). */
  failed: string[];
  done: Promise<void>;
  /**
   * Send the failed starts again (same keys: a start whose answer was lost is found, not
   * repeated); resolves when each is confirmed or failed once more.
   */
  retryFailed(): Promise<void>;
}

/** Start `count` cloud workflows over `durationMs`, keys `chaos-<runId>-<n>`. */
export function startCloudWorkflows(
  api: AdminApi,
  options: { count: number; durationMs: number; runId: string; signal: AbortSignal },
): WorkflowStarts {
  const confirmed: string[] = [];
  const failed: string[] = [];
  const gapMs = options.durationMs / Math.max(1, options.count);
  const starts: Promise<void>[] = [];
  const startOne = async (n: number) => {
    const key = `chaos-${options.runId}-${n}`;
    try {
      await api.call(
        '/api/v1/workflows',
        {
          method: 'POST',
          body: {
            workflow_type: CLOUD_FLOW_TYPE,
            idempotency_key: key,
            data: { amount_minor: 100 + ((n * 7919) % 90_000), batch: n },
          },
        },
        { repeat: 'idempotent', deadlineMs: 180_000 },
      );
      confirmed.push(key);
    } catch {
      failed.push(key);
    }
  };
  const done = (async () => {
    for (let n = 0; n < options.count && !options.signal.aborted; n++) {
      starts.push(startOne(n));
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    await Promise.all(starts);
  })();
  const retryFailed = async () => {
    const again = failed.splice(0).map((key) => Number(key.slice(key.lastIndexOf('-') + 1)));
    await Promise.all(again.map(startOne));
  };
  return { confirmed, failed, done, retryFailed };
}

const DIRECT_TYPES = [
  { command_type: 'DIAGNOSTIC', payload: { checks: ['metrics', 'config'] } },
  { command_type: 'UPDATE_CONFIG', payload: { reason: 'chaos run' } },
  { command_type: 'SYNC_TRANSACTIONS', payload: {} },
] as const;

/**
 * Send one command to `deviceId`. Repeated after an unclear failure: a second command is
 * harmless to the invariants (each is checked on its own), a lost one would test nothing.
 */
export async function sendCommand(
  api: AdminApi,
  deviceId: string,
  random: () => number,
): Promise<string> {
  const command = DIRECT_TYPES[Math.floor(random() * DIRECT_TYPES.length)]!;
  await api.call(
    `/api/v1/devices/${encodeURIComponent(deviceId)}/commands`,
    {
      method: 'POST',
      body: {
        ...command,
        max_retries: COMMAND_RETRIES,
        expires_in_seconds: COMMAND_TTL_SECONDS,
      },
    },
    { repeat: 'idempotent' },
  );
  return command.command_type;
}

/** A DIAGNOSTIC broadcast to every terminal, in two phases (repeated like a command). */
export async function broadcastDiagnostic(api: AdminApi): Promise<string> {
  const created = await api.call<{ broadcast_id: string }>(
    '/api/v1/command-broadcasts',
    {
      method: 'POST',
      body: {
        command: {
          command_type: 'DIAGNOSTIC',
          payload: { checks: ['metrics'] },
          max_retries: COMMAND_RETRIES,
          expires_in_seconds: COMMAND_TTL_SECONDS,
        },
        target: { device_type: 'POS_TERMINAL' },
        rollout: { phases: [50, 100], wait_seconds: 2 },
      },
    },
    { repeat: 'idempotent' },
  );
  return created.broadcast_id;
}

/** Event kinds of the run's two registrations: facts, and device presence (much chattier). */
export const WEBHOOK_SUBSCRIPTIONS = [
  {
    name: 'chaos facts',
    event_types: [
      'workflow.completed',
      'workflow.failed',
      'command.executed',
      'command.failed',
      'saf.batch_synced',
      'config.published',
    ],
  },
  { name: 'chaos presence', event_types: ['device.online', 'device.offline'] },
] as const;

/** Register the run's webhooks to `receiver`; resolves with their ids. */
export async function registerWebhooks(
  api: AdminApi,
  receiver: WebhookReceiver,
): Promise<string[]> {
  const ids: string[] = [];
  for (const subscription of WEBHOOK_SUBSCRIPTIONS) {
    const created = await api.call<{ webhook_id: string; secret: string }>('/api/v1/webhooks', {
      method: 'POST',
      body: {
        name: subscription.name,
        url: receiver.url,
        event_types: subscription.event_types,
        max_retries: 25,
      },
    });
    receiver.secrets.set(created.webhook_id, created.secret);
    ids.push(created.webhook_id);
  }
  return ids;
}
