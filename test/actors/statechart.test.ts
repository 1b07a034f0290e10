/**
 * The statechart graph read off a compiled machine: every step a node with its substates,
 * DECISION routes as labelled edges, PARALLEL branches and LOOP bodies inside their step,
 * compensation and the final states, machine-level transitions kept apart.
 */
import { describe, expect, it } from 'vitest';
import { compileWorkflowMachine, describeStatechart } from '../../actors/index.js';
import { definition } from '../support/engine.js';

const YAML = `
workflow_type: chart_demo
steps:
  - { name: reserve, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - name: choose
    type: DECISION
    function: steps.classify
    routes:
      - { condition: "state.band == 'high'", target: fan out }
      - { default: repeat }
  - name: fan out
    type: PARALLEL
    allow_partial_success: true
    tasks:
      - { name: a, function_path: steps.task_a }
      - { name: c, function_path: steps.task_c }
  - name: repeat
    type: LOOP
    mode: WHILE
    while_condition: state.counter < 3
    max_iterations: 5
    loop_body:
      - { name: bump, type: STANDARD, function: steps.bump_counter }
  - { name: ask, type: HUMAN_IN_LOOP, function: steps.ask_human }
`;

describe('describeStatechart', () => {
  it('draws the machine the engine runs', async () => {
    const compiled = compileWorkflowMachine(await definition(YAML));
    const chart = describeStatechart(compiled);
    expect(chart.initial).toBe('reserve');
    expect(chart.machineId).toBe(compiled.machine.id);
    expect(chart.definitionHash).toBe(compiled.hash);

    const byId = new Map(chart.nodes.map((n) => [n.id, n]));
    expect(chart.nodes.filter((n) => n.role === 'step').map((n) => n.label)).toEqual([
      'reserve',
      'choose',
      'fan out',
      'repeat',
      'ask',
    ]);
    // "fan out" is a sanitized key: state keys and labels differ
    const fan = chart.nodes.find((n) => n.label === 'fan out')!;
    expect(fan.id).toBe(compiled.keyOf('fan out'));
    expect(fan).toMatchObject({
      kind: 'PARALLEL',
      substates: ['ready', 'waitingTasks'],
      inner: { group: 'parallel', steps: [{ name: 'a' }, { name: 'c' }] },
    });
    expect(byId.get('repeat')).toMatchObject({
      kind: 'LOOP',
      inner: { group: 'loop', steps: [{ name: 'bump', kind: 'STANDARD' }] },
    });
    expect(byId.get('repeat')!.inner!.note).toContain('state.counter < 3');
    expect(byId.get('ask')!.substates).toEqual(['ready', 'waitingHuman', 'waitingChild']);
    expect(chart.nodes.filter((n) => n.role === 'final').map((n) => [n.id, n.status])).toEqual([
      ['completed', 'COMPLETED'],
      ['failed', 'FAILED'],
      ['rolledBack', 'FAILED_ROLLED_BACK'],
      ['cancelled', 'CANCELLED'],
    ]);

    const edge = (from: string | null, to: string, event: string) =>
      chart.edges.find((e) => e.from === from && e.to === to && e.event === event);
    expect(edge('reserve', 'choose', 'wf.step.completed')).toBeDefined();
    expect(edge('choose', fan.id, 'wf.step.jumped')?.label).toBe("state.band == 'high'");
    expect(edge('choose', 'repeat', 'wf.step.jumped')?.label).toBe('default');
    expect(edge(fan.id, 'repeat', 'wf.step.completed')).toBeDefined();
    expect(edge('ask', 'completed', 'wf.step.completed')).toBeDefined();
    expect(edge('compensating', 'rolledBack', 'wf.compensated')).toBeDefined();
    // machine-level: failure and cancel from anywhere, one edge per target
    expect(edge(null, 'compensating', 'wf.step.failed')).toBeDefined();
    expect(edge(null, 'failed', 'wf.step.failed')).toBeDefined();
    expect(edge(null, 'cancelled', 'wf.cancelled')).toBeDefined();
    const ids = chart.edges.map((e) => `${e.from}|${e.event}|${e.to}`);
    expect(new Set(ids).size).toBe(ids.length);
    // every edge joins nodes of the graph
    for (const e of chart.edges) {
      expect(byId.has(e.to), e.to).toBe(true);
      if (e.from !== null) expect(byId.has(e.from), e.from).toBe(true);
    }
  });
});
