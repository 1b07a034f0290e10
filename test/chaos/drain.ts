/**
 * After the reconnect storm: wait until the fleet and the cloud have nothing left to do, and
 * time the storm's recovery — when every terminal was online again (from the hosts'
 * reports), when every SAF queue was empty, and when the cloud had no moving workflow, open
 * task, open command, unfinished broadcast or undelivered webhook (cloudBacklog.ts).
 */
import type { CloudStore } from '../../runtime/index.js';
import type { AgentHosts } from './agentHosts.js';
import { isDrained, readCloudBacklog, type CloudBacklog } from './cloudBacklog.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How the drain went. */
export interface DrainResult {
  drained: boolean;
  /** Seconds from the storm until every terminal reported itself online (null: never). */
  allOnlineSeconds: number | null;
  /** Seconds from the storm until every SAF queue was empty too (null: never). */
  queuesEmptySeconds: number | null;
  /** The cloud's last backlog reading. */
  last: CloudBacklog | null;
}

/** Wait (at most `timeoutMs` from `stormStart`) for everything to settle. */
export async function drainAfterStorm(options: {
  hosts: AgentHosts;
  agents: number;
  store: CloudStore;
  webhookIds: readonly string[];
  stormStart: number;
  timeoutMs: number;
}): Promise<DrainResult> {
  const { hosts, agents, stormStart } = options;
  const since = () => (Date.now() - stormStart) / 1000;
  const result: DrainResult = {
    drained: false,
    allOnlineSeconds: null,
    queuesEmptySeconds: null,
    last: null,
  };
  while (Date.now() < stormStart + options.timeoutMs) {
    // only reports sent after the storm count: a host's last word before it may be stale
    const fleet = hosts.backlog(stormStart);
    if (result.allOnlineSeconds === null && fleet.reported === agents && fleet.online === agents)
      result.allOnlineSeconds = since();
    if (
      result.allOnlineSeconds !== null &&
      result.queuesEmptySeconds === null &&
      fleet.pending === 0
    )
      result.queuesEmptySeconds = since();
    result.last = await readCloudBacklog(options.store, options.webhookIds).catch(() => null);
    if (result.queuesEmptySeconds !== null && result.last && isDrained(result.last)) {
      result.drained = true;
      break;
    }
    await sleep(1_000);
  }
  return result;
}

/** Ask `done` every `everyMs` until it says yes or `timeoutMs` have passed; a failed ask is a no. */
async function waitUntil(
  done: () => Promise<boolean>,
  timeoutMs: number,
  everyMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done().catch(() => false)) return;
    await sleep(everyMs);
  }
}

/**
 * Wait (at most `timeoutMs`) until the cloud has recorded every device of `deviceIds` as gone
 * (neither ONLINE nor SYNCING). A gateway writes presence behind, so a terminal's goodbye —
 * and the `device.offline` event written in the same transaction — reaches the database an
 * interval or more after its socket closed; whoever waits for that event's delivery must
 * first wait for the event to exist.
 */
export function waitForFleetOffline(
  store: CloudStore,
  deviceIds: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const online = () =>
    store.cloud
      .selectFrom('edge_devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('device_id', 'in', deviceIds)
      .where('status', 'in', ['ONLINE', 'SYNCING'])
      .execute();
  return waitUntil(async () => Number((await online())[0]?.n ?? 0) === 0, timeoutMs, 250);
}

/** Wait (at most `timeoutMs`) until the run's webhook deliveries are all delivered. */
export function waitForWebhooks(
  store: CloudStore,
  webhookIds: readonly string[],
  timeoutMs: number,
): Promise<void> {
  return waitUntil(
    async () => (await readCloudBacklog(store, webhookIds)).undeliveredWebhooks === 0,
    timeoutMs,
    1_000,
  );
}
