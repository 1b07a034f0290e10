/** Every system the queue benchmark measures, Saffron first; the worker processes look theirs up here. */
import { floor } from './floor.js';
import { graphileWorker, graphileWorkerBatched } from './graphileWorker.js';
import { pgBoss } from './pgBoss.js';
import { saffron, saffronPrefetch, saffronQueueOnly } from './saffron.js';
import type { QueueSystem } from './system.js';

export const SYSTEMS: readonly QueueSystem[] = [
  saffron,
  saffronPrefetch,
  saffronQueueOnly,
  pgBoss,
  graphileWorker,
  graphileWorkerBatched,
  floor,
];

/**
 * The systems whose figures Saffron's are compared with: each peer library in every
 * configuration measured, so "the faster peer" is a library at its faster setting.
 */
export const PEERS: readonly QueueSystem[] = [pgBoss, graphileWorker, graphileWorkerBatched];

/** Not a queue: what the database work of a Saffron task costs alone (floor.ts), the bound for any runtime. */
export const FLOOR: QueueSystem = floor;
