/**
 * Statechart inspection: a runtime given `inspect` streams each workflow's committed
 * transitions as Stately inspector messages — the actor with its machine definition, every
 * event a transition took, the snapshot it left — to a real WebSocket endpoint on loopback,
 * only after the commit, redacted of card data and credentials, and without ever waiting for
 * an inspector that is slow or gone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createWebSocketInspector,
  parseInspectUrl,
  type InspectionMessage,
  type Runtime,
  type SnapshotMessage,
} from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';
import { startInspectEndpoint, type InspectEndpoint } from './inspectEndpoint.js';

const REVIEW = `
workflow_type: refund_review
automate_next: true
steps:
  - { name: review, type: HUMAN_IN_LOOP, function: steps.review_returns }
  - { name: finish, type: STANDARD, function: steps.mark }
`;

const CARD = '4111111111111111';

const of = (id: string) => (m: InspectionMessage) => m.sessionId === id;
const snapshots = (messages: InspectionMessage[], id: string) =>
  messages.filter((m): m is SnapshotMessage => m.type === '@xstate.snapshot' && m.sessionId === id);

for (const dialect of DIALECTS) {
  describe(`inspection on ${dialect.name}`, () => {
    let handle: TestStore;
    let endpoint: InspectEndpoint;
    let rt: Runtime | undefined;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      endpoint = await startInspectEndpoint();
    });
    afterEach(async () => {
      await rt?.close();
      rt = undefined;
      await endpoint.close();
      await handle.close();
    });

    it('streams actor, events and snapshots of a workflow that waits for a person and resumes', async () => {
      rt = engineFor(handle, { inspect: endpoint.url });
      const def = await definition(REVIEW);
      let wf = await rt.start(def, {
        amount: 25000,
        pan: CARD,
        note: `card ${CARD.replace(/(\d{4})/g, '$1 ').trim()} declined`,
      });
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      await endpoint.until(
        (ms) =>
          snapshots(ms, wf.id).some(
            (s) => s.snapshot.value && JSON.stringify(s.snapshot.value).includes('waitingHuman'),
          ),
        'the wait for a person',
      );
      wf = await rt.resume(wf.id, { by: 'kim' });
      expect(wf.status).toBe('COMPLETED');
      await endpoint.until(
        (ms) => snapshots(ms, wf.id).some((s) => s.snapshot.status === 'done'),
        'the final snapshot',
      );

      const mine = endpoint.messages.filter(of(wf.id));
      const [actor] = mine;
      expect(actor?.type).toBe('@xstate.actor');
      if (actor?.type !== '@xstate.actor') throw new Error('no actor first');
      expect(actor).toMatchObject({
        name: 'refund_review',
        rootId: wf.id,
        _version: expect.any(String) as string,
        snapshot: { status: 'active', value: { review: 'ready' } },
      });
      expect(actor.parentId).toBeUndefined();
      expect(Number(actor.createdAt)).toBeGreaterThan(0);
      const machine = JSON.parse(actor.definition!) as {
        id: string;
        states: Record<string, unknown>;
      };
      expect(Object.keys(machine.states)).toEqual(
        expect.arrayContaining(['review', 'finish', 'completed', 'cancelled']),
      );
      // one actor message per workflow, and unique message ids
      expect(mine.filter((m) => m.type === '@xstate.actor')).toHaveLength(1);
      expect(new Set(endpoint.messages.map((m) => m.id)).size).toBe(endpoint.messages.length);

      const events = mine.flatMap((m) => (m.type === '@xstate.event' ? [m.event.type] : []));
      expect(events).toEqual([
        'wf.step.paused',
        'wf.human.resumed',
        'wf.step.completed',
        'wf.step.completed',
      ]);
      const trail = snapshots(endpoint.messages, wf.id).map((s) => [
        s.event.type,
        s.snapshot.value,
        s.snapshot.context.workflowStatus,
      ]);
      expect(trail).toEqual([
        ['xstate.init', { review: 'ready' }, 'ACTIVE'],
        ['wf.step.paused', { review: 'waitingHuman' }, 'WAITING_HUMAN_INPUT'],
        ['wf.step.completed', { finish: 'ready' }, 'ACTIVE'],
        ['wf.step.completed', 'completed', 'COMPLETED'],
      ]);
      const last = snapshots(endpoint.messages, wf.id).at(-1)!;
      expect(last.snapshot.status).toBe('done');
      expect(last.snapshot.context.state).toMatchObject({
        reviewed_by: 'kim',
        visited: ['finish'],
      });
      // every event comes before the snapshot it led to
      const order = mine.map((m) => m.type);
      expect(order.at(-1)).toBe('@xstate.snapshot');

      // card data never leaves: not the member named like one, not the number in a text
      const wire = JSON.stringify(endpoint.messages);
      expect(wire).not.toContain(CARD);
      expect(wire).not.toContain('4111 1111 1111 1111');
      expect(last.snapshot.context.state).toMatchObject({ pan: '[REDACTED]', note: '[REDACTED]' });
    });

    it('tells of a step only once its commit is written', async () => {
      const seen: InspectionMessage[] = [];
      const atFault: { point: string; step: string; snapshots: number }[] = [];
      rt = engineFor(handle, {
        inspect: (m) => seen.push(m),
        faults: (point, { stepName }) => {
          atFault.push({
            point,
            step: stepName,
            snapshots: seen.filter((m) => m.type === '@xstate.snapshot').length,
          });
          return Promise.resolve();
        },
      });
      const wf = await rt.start(await definition(REVIEW), { amount: 1 });
      await rt.resume(wf.id, { by: 'lee' });
      const pairs = atFault.filter(
        (f) => f.point === 'before-commit' || f.point === 'after-commit',
      );
      expect(pairs.length).toBeGreaterThanOrEqual(4);
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        expect(pairs[i]!.point).toBe('before-commit');
        expect(pairs[i + 1]!.point).toBe('after-commit');
        // the commit's snapshot is out by the time the commit returns, not before
        expect(pairs[i + 1]!.snapshots).toBe(pairs[i]!.snapshots + 1);
      }
    });

    it('tells of a cancel, and a workflow goes on whether the inspector listens or not', async () => {
      const port = endpoint.port;
      await endpoint.close();
      // nobody listens: the engine runs as ever, messages wait in the bounded buffer
      rt = engineFor(handle, {
        inspect: {
          to: `ws://127.0.0.1:${port}`,
          webSocket: { minBackoffMs: 20, maxBackoffMs: 40 },
        },
      });
      const wf = await rt.start(await definition(REVIEW), { amount: 5 });
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      // the inspector comes up: the client reconnects and sends what it kept
      endpoint = await startInspectEndpoint(port);
      const cancelled = await rt.cancel(wf.id, { reason: 'customer left' });
      expect(cancelled.status).toBe('CANCELLED');
      await endpoint.until(
        (ms) => snapshots(ms, wf.id).some((s) => s.snapshot.value === 'cancelled'),
        'the cancel',
      );
      const mine = endpoint.messages.filter(of(wf.id));
      expect(mine[0]?.type).toBe('@xstate.actor');
      const events = mine.flatMap((m) => (m.type === '@xstate.event' ? [m.event.type] : []));
      expect(events).toEqual(['wf.step.paused', 'wf.cancelled']);
      expect(snapshots(mine, wf.id).at(-1)!.snapshot).toMatchObject({
        status: 'done',
        context: { workflowStatus: 'CANCELLED' },
      });
    });
  });
}

describe('the WebSocket inspector client', () => {
  it('keeps the newest messages while nobody listens, then reconnects and sends them in order', async () => {
    const probe = await startInspectEndpoint();
    const port = probe.port;
    await probe.close();
    const client = createWebSocketInspector(`ws://127.0.0.1:${port}`, {
      maxBuffered: 5,
      minBackoffMs: 20,
      maxBackoffMs: 40,
    });
    for (let i = 0; i < 20; i++)
      client.next({
        type: '@xstate.event',
        sessionId: 'wf',
        rootId: 'wf',
        createdAt: '1',
        id: String(i),
        _version: 'test',
        event: { type: 'n' },
        sourceId: undefined,
      });
    expect(client.buffered).toBe(5);
    expect(client.dropped).toBe(15);
    const endpoint = await startInspectEndpoint(port);
    try {
      await endpoint.until((ms) => ms.length === 5, 'the buffered messages');
      expect(endpoint.messages.map((m) => m.id)).toEqual(['15', '16', '17', '18', '19']);
      expect(client.connected).toBe(true);
    } finally {
      await client.close();
      await endpoint.close();
    }
  });

  it('takes only ws:// and wss:// URLs', () => {
    expect(parseInspectUrl('wss://inspect.example:443/x').protocol).toBe('wss:');
    for (const bad of ['http://127.0.0.1:8080', 'localhost:8080', 'ws://', ''])
      expect(() => parseInspectUrl(bad), bad).toThrow(
        expect.objectContaining({ code: 'INSPECT_URL_INVALID' }) as Error,
      );
  });
});
