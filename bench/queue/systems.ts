/** Every system the queue benchmark measures, Saffron first; the worker processes look theirs up here. */
import { graphileWorker } from './graphileWorker.js';
import { pgBoss } from './pgBoss.js';
import { saffron, saffronQueueOnly } from './saffron.js';
import type { QueueSystem } from './system.js';

export const SYSTEMS: readonly QueueSystem[] = [saffron, saffronQueueOnly, pgBoss, graphileWorker];

/** The systems whose figures Saffron's are compared with. */
export const PEERS: readonly QueueSystem[] = [pgBoss, graphileWorker];
