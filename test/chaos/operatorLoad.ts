/**
 * What operators do during the chaos run, through the admin API: start cloud workflows
 * (each with an idempotency key, so a start repeated after a dead gateway or a database
 * restart is the same workflow), send single commands to random terminals and start a
 * DIAGNOSTIC broadcast to the whole fleet (both without a key: created once by checking
 * before repeating), and register the webhooks whose deliveries the run checks. Commands get generous retries and lifetimes: the run's outages are short,
 * and a command the cloud gives up on would hide whether the device ran it.
 */
import { isRefusal, type AdminApi } from './adminApi.js';
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

/** How long an operator keeps trying to get one command or broadcast created. */
const CREATE_DEADLINE_MS = 240_000;

/**
 * Create something that has no idempotency key, exactly once: POST; after an unclear failure
 * (a reset connection, a timeout, a 5xx) read the ids that exist now (`list`), and POST again
 * only if none is new since before the first attempt. Blind repeats made duplicate
 * broadcasts — hundreds of extra commands — in a congested cloud.
 */
async function createOnce<T>(
  post: () => Promise<T>,
  list: () => Promise<string[]>,
  found: (created: string) => T,
): Promise<T> {
  const deadline = Date.now() + CREATE_DEADLINE_MS;
  const before = new Set(await list());
  for (;;) {
    try {
      return await post();
    } catch (error) {
      if (isRefusal(error)) throw error;
      const created = (await list()).find((id) => !before.has(id));
      if (created !== undefined) return found(created);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** Send one command to `deviceId` (created once: see {@link createOnce}); resolves with its type. */
export async function sendCommand(
  api: AdminApi,
  deviceId: string,
  random: () => number,
): Promise<string> {
  const command = DIRECT_TYPES[Math.floor(random() * DIRECT_TYPES.length)]!;
  const path = `/api/v1/devices/${encodeURIComponent(deviceId)}/commands`;
  const payload = JSON.stringify(command.payload);
  await createOnce(
    () =>
      api.call(
        path,
        {
          method: 'POST',
          body: {
            ...command,
            max_retries: COMMAND_RETRIES,
            expires_in_seconds: COMMAND_TTL_SECONDS,
          },
        },
        { deadlineMs: 60_000 },
      ),
    async () =>
      (
        await api.call<{
          commands: { command_id: string; command_type: string; payload: unknown }[];
        }>(`${path}?limit=500`, {}, { deadlineMs: CREATE_DEADLINE_MS })
      ).commands
        // the broadcast's DIAGNOSTIC has other checks: only this kind of command counts
        .filter((c) => c.command_type === command.command_type)
        .filter((c) => JSON.stringify(c.payload) === payload)
        .map((c) => c.command_id),
    () => undefined,
  );
  return command.command_type;
}

/** A DIAGNOSTIC broadcast to every terminal, in two phases (created once); resolves with its id. */
export async function broadcastDiagnostic(api: AdminApi): Promise<string> {
  return createOnce(
    async () =>
      (
        await api.call<{ broadcast_id: string }>(
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
          { deadlineMs: 60_000 },
        )
      ).broadcast_id,
    async () =>
      (
        await api.call<{ broadcasts: { broadcast_id: string }[] }>(
          '/api/v1/command-broadcasts?limit=200',
          {},
          { deadlineMs: CREATE_DEADLINE_MS },
        )
      ).broadcasts.map((b) => b.broadcast_id),
    (id) => id,
  );
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
