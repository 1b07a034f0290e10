/**
 * `run --executor postgres` decides from a few separate reads whether a workflow has
 * settled. Commits land between those reads; these tests put one there on purpose.
 */
import { describe, expect, it } from 'vitest';
import { waitingOn, type SettleReads } from '../../bin/awaitWorkers.js';
import type { WorkflowStatus } from '../../runtime/model/statuses.js';
import type { WorkflowRecord } from '../../runtime/store/index.js';

const record = (
  id: string,
  status: WorkflowStatus,
  version: number,
  childId?: string,
): WorkflowRecord => ({
  id,
  workflowType: id,
  workflowVersion: '1',
  status,
  currentStepIndex: 0,
  currentStep: null,
  state: {},
  definitionSnapshot: null,
  definitionHash: null,
  actorSnapshot: childId === undefined ? null : { context: { childId } },
  ownerId: null,
  dataRegion: null,
  parentWorkflowId: null,
  idempotencyKey: null,
  version,
  metadata: {},
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

/** Reads of `rows` and of the heartbeats in `driven`. */
const reads = (rows: WorkflowRecord[], driven: Set<string>): SettleReads => ({
  workflow: (id) => Promise.resolve(rows.find((r) => r.id === id)),
  driven: (id) => Promise.resolve(driven.has(id)),
});

describe('waitingOn', () => {
  it('keeps waiting for the parent when the child ends between its row and heartbeat reads', async () => {
    const parent = record('loan', 'PENDING_SUB_WORKFLOW', 3, 'check');
    const running = record('check', 'ACTIVE', 5);
    // the child's last commit lands right after its row was read: COMPLETED, heartbeat
    // removed; the parent is resumed by its driver a moment later
    const ended = record('check', 'COMPLETED', 6);
    const live = reads([parent, ended], new Set());
    let childReads = 0;
    const r: SettleReads = {
      workflow: (id) =>
        id === 'check' && childReads++ === 0 ? Promise.resolve(running) : live.workflow(id),
      driven: live.driven,
    };
    expect(await waitingOn(r, parent, true)).toEqual({ kind: 'driver' });
  });

  it('settles a sub-workflow that waits for an explicit next, and drives a top one', async () => {
    const parent = record('loan', 'PENDING_SUB_WORKFLOW', 3, 'check');
    const child = record('check', 'ACTIVE', 5);
    const r = reads([parent, child], new Set());
    expect(await waitingOn(r, parent, true)).toBeUndefined();
    expect(await waitingOn(r, child, true)).toEqual({ kind: 'drive' });
  });

  it('waits for a driven workflow, for tasks, and for a parent whose child ended', async () => {
    const parent = record('loan', 'PENDING_SUB_WORKFLOW', 3, 'check');
    const child = record('check', 'COMPLETED', 9);
    const r = reads([parent, child], new Set(['other']));
    expect(await waitingOn(r, record('other', 'ACTIVE', 1), true)).toEqual({ kind: 'driver' });
    expect(await waitingOn(r, record('t', 'PENDING_ASYNC', 1), true)).toEqual({
      kind: 'tasks',
      workflowId: 't',
    });
    expect(await waitingOn(r, parent, true)).toEqual({ kind: 'driver' });
    expect(await waitingOn(r, record('h', 'WAITING_HUMAN_INPUT', 1), true)).toBeUndefined();
  });
});
