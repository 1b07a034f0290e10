/**
 * One worker process of the queue benchmark, forked by workers.ts:
 *   node --import tsx bench/queue/worker.ts '{"system":"saffron","config":{…}}'
 * It runs the named system's own worker and records the wall-clock moment each task body
 * starts. It exits when the benchmark disconnects, so a benchmark that dies leaves no worker
 * behind.
 */
import { wallClock } from './system.js';
import { SYSTEMS } from './systems.js';
import type { FromWorker, ToWorker, WorkerSpec } from './workers.js';

const send = (m: FromWorker) =>
  new Promise<void>((resolve) => {
    if (!process.send) resolve();
    else process.send(m, undefined, undefined, () => resolve());
  });

let failed = false;
async function fail(error: unknown): Promise<void> {
  if (failed) return;
  failed = true;
  process.exitCode = 1;
  await send({
    kind: 'failed',
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.disconnect();
}

process.on('disconnect', () => process.exit());

try {
  const spec = JSON.parse(process.argv[2] ?? '') as WorkerSpec;
  const system = SYSTEMS.find((s) => s.name === spec.system);
  if (!system) throw new Error(`unknown system '${spec.system}'`);
  const starts: [string, number][] = [];
  const worker = await system.worker(
    spec.config,
    (key) => starts.push([key, wallClock()]),
    (error) => void fail(error),
  );
  process.on('message', (m: ToWorker) => {
    if (m.kind === 'go') worker.go().catch(fail);
    else
      worker.stop().then(async () => {
        await send({ kind: 'stopped', starts });
        process.disconnect();
      }, fail);
  });
  await send({ kind: 'ready' });
} catch (error) {
  await fail(error);
}
