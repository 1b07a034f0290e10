/**
 * One DBOS worker process of the end-to-end measurement, forked by bench/system/workers.ts:
 *
 *   node --import tsx bench/system/dbosWorker.ts '{"config":{…},"executorId":"bench-worker-1"}'
 *
 * DBOS launched listening only to the task queue: it dequeues and runs the `score` children
 * the engine process's workflows enqueue. Ready once launched; it exits when the benchmark
 * disconnects (bench/gateway/child.ts protocol).
 */
import { serveParent } from '../gateway/child.js';
import { launchDbos, type DbosConfig } from './dbos.js';

/** What a DBOS worker process is started with. */
export interface DbosWorkerSpec {
  config: DbosConfig;
  executorId: string;
}

const spec = JSON.parse(process.argv[2] ?? '') as DbosWorkerSpec;
serveParent(
  launchDbos(spec.config, 'worker', spec.executorId).then(() => ({})),
  {},
);
