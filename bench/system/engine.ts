/**
 * The engine process of the end-to-end measurement, forked by bench/system/workflows.ts:
 *
 *   node --import tsx bench/system/engine.ts SPEC
 *
 * It embeds one system's engine the way a service would — Saffron's `createRuntime` with
 * `runTasks: false` (ASYNC tasks are left to `saffron worker` processes), or DBOS launched
 * listening to no queue — and starts workflows on request, noting the wall-clock moment just
 * before each start call. Calls (bench/gateway/child.ts protocol):
 *
 * - `burst {count, parallel}`: start `count` workflows, `parallel` start calls in flight.
 * - `paced {count, rate}`: start `count` workflows at a steady `rate` per second (open loop).
 *
 * Both answer `[workflow id, started at][]`. Completion is read from the database by the
 * benchmark, so this process does nothing per workflow after its start call returns.
 */
import { randomUUID } from 'node:crypto';
import { createRuntime } from '../../actors/index.js';
import { loadDefinition, openStore } from '../../runtime/index.js';
import { serveParent } from '../gateway/child.js';
import { inParallel, wallClock } from '../queue/system.js';
import { launchDbos, type DbosConfig } from './dbos.js';
import { FLOW_YAML, flowInput } from './flow.js';

/** What an engine process runs. */
export type EngineSpec =
  | { system: 'saffron'; url: string; schema: string; stepsRoot: string; poolSize: number }
  | { system: 'dbos'; config: DbosConfig };

/** When each workflow's start was called: [id, wall-clock ms]. */
export type Starts = [string, number][];

interface Starter {
  /** Start workflow number `i`; returns its id. */
  start(i: number): Promise<string>;
}

async function saffronStarter(spec: Extract<EngineSpec, { system: 'saffron' }>): Promise<Starter> {
  const store = await openStore(spec.url, {
    postgres: {
      schema: spec.schema,
      maxConnections: spec.poolSize,
      applicationName: 'bench-system-engine',
    },
  });
  const runtime = createRuntime({
    store,
    stepsRoot: spec.stepsRoot,
    runTasks: false,
    onBackgroundError: (error, id) =>
      process.stderr.write(`engine: background drive of ${id} failed: ${String(error)}\n`),
  });
  const { definition } = await loadDefinition(FLOW_YAML, { stepsRoot: spec.stepsRoot });
  return { start: async (i) => (await runtime.start(definition, flowInput(i))).id };
}

async function dbosStarter(config: DbosConfig): Promise<Starter> {
  const dbos = await launchDbos(config, 'engine', 'bench-engine');
  return {
    async start(i) {
      const id = randomUUID();
      await dbos.start(id, flowInput(i));
      return id;
    },
  };
}

const spec = JSON.parse(process.argv[2] ?? '') as EngineSpec;
const starter = spec.system === 'saffron' ? saffronStarter(spec) : dbosStarter(spec.config);
let numbered = 0;

/** Start one workflow, noting when. */
async function startOne(starts: Starts): Promise<void> {
  const s = await starter;
  const at = wallClock();
  starts.push([await s.start(numbered++), at]);
}

serveParent(
  starter.then(() => ({})),
  {
    async burst(call) {
      const starts: Starts = [];
      await inParallel(call.count as number, call.parallel as number, () => startOne(starts));
      return starts;
    },
    async paced(call) {
      const starts: Starts = [];
      const count = call.count as number;
      const intervalMs = 1000 / (call.rate as number);
      const began = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const wait = began + i * intervalMs - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        pending.push(startOne(starts));
      }
      await Promise.all(pending);
      return starts;
    },
  },
);
