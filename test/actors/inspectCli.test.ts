/**
 * `--inspect URL` on the commands that run workflows: a real `saffron worker` process sends
 * the statechart of a workflow it finishes (an ASYNC task it runs, the steps it then drives)
 * to an inspector endpoint on loopback, and a URL that is not ws:// or wss:// is refused
 * before anything starts.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { SnapshotMessage } from '../../actors/index.js';
import { runCli } from '../support/cli.js';
import { definition, engineFor, ENGINE_STEPS } from '../support/engine.js';
import { openWithSchema, type TestStore, EDGE_DIALECT } from '../support/stores.js';
import { startInspectEndpoint, type InspectEndpoint } from './inspectEndpoint.js';

const launcher = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));
const sqlite = EDGE_DIALECT;

const QUEUED = `
workflow_type: queued_review
automate_next: true
steps:
  - { name: prepare, type: STANDARD, function: steps.mark }
  - { name: score, type: ASYNC, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`;

describe('saffron worker --inspect', () => {
  let handle: TestStore | undefined;
  let endpoint: InspectEndpoint | undefined;
  afterEach(async () => {
    await endpoint?.close();
    await handle?.close();
  });

  it('streams the workflows the worker moves on', async () => {
    handle = await openWithSchema(sqlite);
    endpoint = await startInspectEndpoint();
    const engine = engineFor(handle, { runTasks: false });
    const wf = await engine.start(await definition(QUEUED), { n: 1 });
    expect(wf.status).toBe('PENDING_ASYNC');
    await engine.close();

    const worker = spawn(
      process.execPath,
      [
        launcher,
        'worker',
        '--db',
        handle.location,
        '--steps',
        ENGINE_STEPS,
        '--poll-ms',
        '100',
        '--inspect',
        endpoint.url,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    try {
      await endpoint.until(
        (ms) =>
          ms.some(
            (m) =>
              m.type === '@xstate.snapshot' &&
              m.sessionId === wf.id &&
              m.snapshot.status === 'done',
          ),
        'the workflow finish',
      );
    } finally {
      worker.kill('SIGTERM');
    }
    expect(await exited).toBe(0);

    const mine = endpoint.messages.filter((m) => m.sessionId === wf.id);
    // the worker did not start it: it announces the workflow at the first commit it writes
    expect(mine[0]).toMatchObject({ type: '@xstate.actor', name: 'queued_review', rootId: wf.id });
    expect(
      mine
        .filter((m) => m.type === '@xstate.event')
        .map((m) => m.type === '@xstate.event' && m.event.type),
    ).toEqual(['wf.tasks.completed', 'wf.step.completed']);
    const last = mine.filter((m): m is SnapshotMessage => m.type === '@xstate.snapshot').at(-1)!;
    expect(last.snapshot).toMatchObject({
      status: 'done',
      value: 'completed',
      context: { workflowStatus: 'COMPLETED', state: { visited: ['prepare', 'score', 'finish'] } },
    });
    expect((await readWorkflow(handle, wf.id)).status).toBe('COMPLETED');
  });

  it('refuses an --inspect URL that is not ws:// or wss://', async () => {
    for (const command of [['worker'], ['cloud', 'serve'], ['edge', 'run']]) {
      const run = await runCli([...command, '--inspect', 'http://127.0.0.1:9999']);
      expect(run.code, command.join(' ')).not.toBe(0);
      expect(run.stderr).toContain('--inspect takes a ws:// or wss:// URL');
    }
  });
});

async function readWorkflow(handle: TestStore, id: string) {
  const engine = engineFor(handle);
  try {
    return await engine.get(id);
  } finally {
    await engine.close();
  }
}
