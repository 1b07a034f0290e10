/**
 * The batch and broadcast machines on their own (pure transitions): release order per
 * execution mode, stop-on-failure, final status by outcome, the broadcast's phases, wait,
 * threshold halt and its override, pause — and persist → JSON → restore → continue for
 * both, with a clear error (not a crash) for a snapshot that does not restore.
 */
import { describe, expect, it } from 'vitest';
import {
  batchEvents,
  batchProgress,
  batchStatusOf,
  bcEvents,
  broadcastStatusOf,
  initialBatchSnapshot,
  initialBroadcastSnapshot,
  nextBatchSnapshot,
  nextBroadcastSnapshot,
  persistBatchSnapshot,
  persistBroadcastSnapshot,
  restoreBatchSnapshot,
  restoreBroadcastSnapshot,
  type BatchMachineContext,
  type BroadcastMachineContext,
} from '../../actors/index.js';

const batch = (mode: 'SEQUENTIAL' | 'PARALLEL', stopOnFailure = true): BatchMachineContext => ({
  mode,
  stopOnFailure,
  commands: [
    { command_type: 'REBOOT', payload: {}, max_retries: 0 },
    { command_type: 'DIAGNOSTIC', payload: {}, max_retries: 0 },
  ],
  items: ['d1', 'd2'].flatMap((deviceId) =>
    [0, 1].map((seq) => ({
      commandId: `${deviceId}-${seq}`,
      deviceId,
      seq,
      status: 'WAITING' as const,
    })),
  ),
});
const statuses = (snapshot: ReturnType<typeof initialBatchSnapshot>) =>
  Object.fromEntries(snapshot.context.items.map((i) => [i.commandId, i.status]));
/** Through JSON, as the row keeps it. */
const roundTrip = <T>(value: T): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('batch machine', () => {
  it('SEQUENTIAL releases one command per device, the next after an ack', () => {
    let s = nextBatchSnapshot(initialBatchSnapshot(batch('SEQUENTIAL')), batchEvents.start());
    expect(statuses(s)).toEqual({
      'd1-0': 'PENDING',
      'd1-1': 'WAITING',
      'd2-0': 'PENDING',
      'd2-1': 'WAITING',
    });
    s = nextBatchSnapshot(s, batchEvents.updated([{ commandId: 'd1-0', status: 'DELIVERED' }]));
    expect(statuses(s)['d1-1']).toBe('WAITING');
    s = nextBatchSnapshot(s, batchEvents.updated([{ commandId: 'd1-0', status: 'EXECUTED' }]));
    expect(statuses(s)['d1-1']).toBe('PENDING');
    expect(batchStatusOf(s)).toBe('IN_PROGRESS');
  });

  it('skips what follows a failure, unless told to go on', () => {
    const stop = nextBatchSnapshot(
      nextBatchSnapshot(initialBatchSnapshot(batch('SEQUENTIAL')), batchEvents.start()),
      batchEvents.updated([{ commandId: 'd1-0', status: 'FAILED' }]),
    );
    expect(statuses(stop)['d1-1']).toBe('SKIPPED');
    const goOn = nextBatchSnapshot(
      nextBatchSnapshot(initialBatchSnapshot(batch('SEQUENTIAL', false)), batchEvents.start()),
      batchEvents.updated([{ commandId: 'd1-0', status: 'FAILED' }]),
    );
    expect(statuses(goOn)['d1-1']).toBe('PENDING');
  });

  it('ends COMPLETED, PARTIALLY_FAILED or FAILED by outcome', () => {
    const settle = (outcome: (id: string) => 'EXECUTED' | 'FAILED') => {
      const s = nextBatchSnapshot(initialBatchSnapshot(batch('PARALLEL')), batchEvents.start());
      return batchStatusOf(
        nextBatchSnapshot(
          s,
          batchEvents.updated(
            s.context.items.map((i) => ({ commandId: i.commandId, status: outcome(i.commandId) })),
          ),
        ),
      );
    };
    expect(settle(() => 'EXECUTED')).toBe('COMPLETED');
    expect(settle((id) => (id === 'd2-1' ? 'FAILED' : 'EXECUTED'))).toBe('PARTIALLY_FAILED');
    expect(settle(() => 'FAILED')).toBe('FAILED');
  });

  it('cancel cancels what was never sent and still records late outcomes', () => {
    let s = nextBatchSnapshot(initialBatchSnapshot(batch('SEQUENTIAL')), batchEvents.start());
    s = nextBatchSnapshot(s, batchEvents.cancel());
    expect(batchStatusOf(s)).toBe('CANCELLED');
    s = nextBatchSnapshot(s, batchEvents.updated([{ commandId: 'd1-0', status: 'EXECUTED' }]));
    expect(batchProgress(s)).toMatchObject({ EXECUTED: 1, PENDING: 1, CANCELLED: 2 });
    expect(batchStatusOf(s)).toBe('CANCELLED');
  });

  it('persists, restores and continues; a bad snapshot is a clear error', () => {
    let s = nextBatchSnapshot(initialBatchSnapshot(batch('SEQUENTIAL')), batchEvents.start());
    s = restoreBatchSnapshot(roundTrip(persistBatchSnapshot(s)), 'b');
    s = nextBatchSnapshot(s, batchEvents.updated([{ commandId: 'd2-0', status: 'EXECUTED' }]));
    expect(statuses(s)['d2-1']).toBe('PENDING');
    expect(() =>
      restoreBatchSnapshot({ machine: 'batch', version: 1, value: 'gone' }, 'b'),
    ).toThrow(expect.objectContaining({ code: 'BATCH_SNAPSHOT_INVALID' }) as Error);
  });
});

const rollout = (): BroadcastMachineContext => ({
  phases: [10, 50, 100],
  waitSeconds: 60,
  threshold: 0.2,
  maxRetries: 0,
  expiresInSeconds: null,
  total: 0,
  phase: 0,
  nextPhaseAt: null,
  haltReason: null,
  overridePhase: null,
  history: [],
});
const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s));
const stats = (done: number, failed: number, open = 0) => ({
  pending: open,
  delivered: 0,
  executed: done,
  failed,
  cancelled: 0,
});

describe('broadcast machine', () => {
  it('runs phases with a wait between them, then completes', () => {
    let s = initialBroadcastSnapshot(rollout());
    s = nextBroadcastSnapshot(s, bcEvents.start(at(0), 10));
    expect([s.value, s.context.phase]).toEqual(['launching', 1]);
    s = nextBroadcastSnapshot(s, bcEvents.launched(at(0), 1, 1));
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(5), stats(1, 0)));
    expect(broadcastStatusOf(s)).toBe('WAITING_NEXT_PHASE');
    expect(s.context.nextPhaseAt).toBe(at(65).toISOString());
    expect(nextBroadcastSnapshot(s, bcEvents.tick(at(64))).value).toBe('waiting');
    // survives persistence while waiting
    s = restoreBroadcastSnapshot(roundTrip(persistBroadcastSnapshot(s)), 'x');
    s = nextBroadcastSnapshot(s, bcEvents.tick(at(65)));
    expect([s.value, s.context.phase]).toEqual(['launching', 2]);
    s = nextBroadcastSnapshot(s, bcEvents.launched(at(65), 2, 4));
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(70), stats(4, 0)));
    s = nextBroadcastSnapshot(s, bcEvents.tick(at(130)));
    s = nextBroadcastSnapshot(s, bcEvents.launched(at(130), 3, 5));
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(140), stats(5, 0)));
    expect(broadcastStatusOf(s)).toBe('COMPLETED');
    expect(s.context.history.map((h) => [h.phase, h.size, h.finishedAt !== null])).toEqual([
      [1, 1, true],
      [2, 4, true],
      [3, 5, true],
    ]);
  });

  it('halts as soon as failures exceed the threshold; resume overrides it for that phase', () => {
    let s = initialBroadcastSnapshot(rollout());
    s = nextBroadcastSnapshot(s, bcEvents.start(at(0), 10));
    s = nextBroadcastSnapshot(s, bcEvents.launched(at(0), 1, 5));
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(1), stats(0, 1, 4)));
    expect(broadcastStatusOf(s)).toBe('IN_PROGRESS'); // 1/5 = 20%: not above
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(2), stats(0, 2, 3)));
    expect([broadcastStatusOf(s), s.context.haltReason]).toEqual(['HALTED', 'FAILURE_THRESHOLD']);
    s = nextBroadcastSnapshot(s, bcEvents.tick(at(1000)));
    expect(broadcastStatusOf(s)).toBe('HALTED');
    s = nextBroadcastSnapshot(s, bcEvents.resume(at(1001)));
    s = nextBroadcastSnapshot(s, bcEvents.progress(at(1002), stats(3, 2)));
    expect(broadcastStatusOf(s)).toBe('WAITING_NEXT_PHASE');
  });

  it('pauses and cancels; a finished broadcast ignores both', () => {
    let s = initialBroadcastSnapshot(rollout());
    s = nextBroadcastSnapshot(s, bcEvents.start(at(0), 10));
    s = nextBroadcastSnapshot(s, bcEvents.launched(at(0), 1, 1));
    s = nextBroadcastSnapshot(s, bcEvents.pause(at(1)));
    expect([broadcastStatusOf(s), s.context.haltReason]).toEqual(['HALTED', 'PAUSED']);
    s = nextBroadcastSnapshot(s, bcEvents.cancel(at(2)));
    expect(broadcastStatusOf(s)).toBe('CANCELLED');
    expect(broadcastStatusOf(nextBroadcastSnapshot(s, bcEvents.resume(at(3))))).toBe('CANCELLED');
    expect(() => restoreBroadcastSnapshot({ machine: 'broadcast' }, 'x')).toThrow(
      expect.objectContaining({ code: 'BROADCAST_SNAPSHOT_INVALID' }) as Error,
    );
  });
});
