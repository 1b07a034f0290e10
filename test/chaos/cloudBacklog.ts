/**
 * What the cloud still has to do, read from its database: workflows not yet terminal or
 * legitimately waiting, tasks not finished, commands not yet answered, broadcasts with
 * phases to come, webhook deliveries not yet delivered. The drain waits for all of it to reach zero before the checks run.
 */
import type { CloudStore } from '../../runtime/index.js';

/** Workflow statuses that mean "still moving" (not terminal, not waiting for a person). */
export const MOVING_STATUSES = ['ACTIVE', 'PENDING_ASYNC', 'PENDING_SUB_WORKFLOW'] as const;

/** Outstanding cloud work. */
export interface CloudBacklog {
  movingWorkflows: number;
  openTasks: number;
  openCommands: number;
  /** Broadcasts with phases still to roll out (their later commands do not exist yet). */
  openBroadcasts: number;
  undeliveredWebhooks: number;
}

const count = (rows: { n: number | string | bigint }[]) => Number(rows[0]?.n ?? 0);

/** Read the backlog (webhook deliveries of `webhookIds` only). */
export async function readCloudBacklog(
  store: CloudStore,
  webhookIds: readonly string[],
): Promise<CloudBacklog> {
  const { cloud: db } = store;
  const moving = await db
    .selectFrom('workflow_executions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', MOVING_STATUSES)
    .execute();
  const tasks = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['PENDING', 'CLAIMED'])
    .execute();
  const commands = await db
    .selectFrom('device_commands')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['PENDING', 'DELIVERED'])
    .execute();
  const broadcasts = await db
    .selectFrom('command_broadcasts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'not in', ['COMPLETED', 'HALTED', 'CANCELLED'])
    .execute();
  const webhooks =
    webhookIds.length === 0
      ? [{ n: 0 }]
      : await db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('webhook_id', 'in', webhookIds)
          .where('status', '!=', 'DELIVERED')
          .execute();
  return {
    movingWorkflows: count(moving),
    openTasks: count(tasks),
    openCommands: count(commands),
    openBroadcasts: count(broadcasts),
    undeliveredWebhooks: count(webhooks),
  };
}

/** Whether nothing is outstanding. */
export function isDrained(b: CloudBacklog): boolean {
  return (
    b.movingWorkflows === 0 &&
    b.openTasks === 0 &&
    b.openCommands === 0 &&
    b.openBroadcasts === 0 &&
    b.undeliveredWebhooks === 0
  );
}
