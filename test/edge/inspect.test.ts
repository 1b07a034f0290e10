/**
 * An edge agent given `inspect` streams its workflows' statecharts, with card numbers kept
 * out: an offline agent over a real SQLite file runs a workflow whose step fails quoting a
 * card number; the inspector hears the actor, the failure and the final snapshot, and never
 * the number.
 */
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { InspectionMessage } from '../../actors/index.js';
import { createEdgeAgent } from '../../edge/index.js';
import { ephemeralKeyring } from '../../gateway/index.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('edge agent --inspect', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-agent-inspect-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends the statechart of a local workflow with card numbers masked', async () => {
    const folder = join(dir, 'workflows');
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'steps.js'),
      [
        'export function note() { return { noted: true }; }',
        "export function charge() { throw new Error('issuer refused card 4111 1111 1111 1111'); }",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(folder, 'charge.yaml'),
      "workflow_type: charge\nworkflow_version: '1'\nautomate_next: true\nsteps:\n  - { name: note, type: STANDARD, function: steps.note }\n  - { name: charge, type: STANDARD, function: steps.charge }\n",
    );
    const seen: InspectionMessage[] = [];
    const agent = createEdgeAgent({
      deviceId: 'pos-inspect-1',
      deviceSecret: 'agent-test-secret-0123456789abcdef',
      cloudUrl: `http://127.0.0.1:${await closedPort()}`,
      dbPath: join(dir, 'edge.db'),
      cardKey: Buffer.alloc(32, 5),
      stepsRoot: folder,
      workflowDirs: [folder],
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
      inspect: (m) => seen.push(m),
    });
    await agent.start();
    try {
      const outcome = await agent.runWorkflow({ workflowType: 'charge', data: { amount: 5 } });
      expect(outcome.kind).toBe('ran');
      if (outcome.kind !== 'ran') return;
      expect(outcome.record.status).toBe('FAILED');
      const mine = seen.filter((m) => m.sessionId === outcome.record.id);
      expect(mine[0]).toMatchObject({ type: '@xstate.actor', name: 'charge' });
      const events = mine.flatMap((m) => (m.type === '@xstate.event' ? [m.event] : []));
      expect(events.map((e) => e.type)).toEqual(['wf.step.completed', 'wf.step.failed']);
      expect(mine.at(-1)).toMatchObject({
        type: '@xstate.snapshot',
        snapshot: { status: 'done', value: 'failed', context: { workflowStatus: 'FAILED' } },
      });
      const wire = JSON.stringify(seen);
      // the failure is told, its text with the number is not
      expect(events[1]).toMatchObject({ error: { step: 'charge', message: '[REDACTED]' } });
      expect(wire).not.toMatch(/4111\D*1111\D*1111\D*1111/);
    } finally {
      await agent.stop();
    }
  });
});
