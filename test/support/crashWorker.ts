/**
 * A child process for crash tests: runs a workflow and kills itself with SIGKILL at a named
 * fault point of a named step — a real process death in the middle of the commit path.
 *   node --import tsx test/support/crashWorker.ts LOCATION WORKFLOW_ID POINT STEP [DURABILITY]
 * A WORKFLOW_ID of `start:<yaml>` starts a new workflow of that definition (`Runtime.start`)
 * instead of running an existing one.
 */
import { createRuntime, type StepDurability } from '../../actors/index.js';
import { openStore, type FaultPoint } from '../../runtime/index.js';
import { definition, ENGINE_STEPS } from './engine.js';

const [location, workflowId, point, step, durability] = process.argv.slice(2) as [
  string,
  string,
  FaultPoint,
  string,
  StepDurability | undefined,
];
const store = await openStore(location);
const runtime = createRuntime({
  store,
  stepsRoot: ENGINE_STEPS,
  // a hold longer than any pause between steps on a loaded machine: what is held is written
  // with the end, or lost with the process, never by the clock
  ...(durability ? { stepDurability: durability, stepHoldMs: 60_000 } : {}),
  faults: (at, where) => {
    if (at === point && where.stepName === step) process.kill(process.pid, 'SIGKILL');
  },
});
if (workflowId.startsWith('start:'))
  await runtime.start(await definition(workflowId.slice('start:'.length)));
else await runtime.runUntilSettled(workflowId);
process.stdout.write('finished without crashing\n');
await runtime.close();
await store.close();
