import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  definitionHash,
  loadDefinition,
  loadDefinitionFile,
  parseDefinitionObject,
  type WorkflowDefinition,
} from '../../runtime/definition/index.js';
import { fixture } from './fixtures.js';

/** Rebuild `value` with every object's keys in an order drawn from `choices`. */
function reorder(value: unknown, choices: number[]): unknown {
  let cursor = 0;
  const next = (): number => choices[cursor++ % choices.length] ?? 0;
  const visit = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(visit);
    if (item === null || typeof item !== 'object') return item;
    const keys = Object.keys(item);
    const shuffled: string[] = [];
    while (keys.length > 0) shuffled.push(...keys.splice(next() % keys.length, 1));
    return Object.fromEntries(
      shuffled.map((key) => [key, visit((item as Record<string, unknown>)[key])]),
    );
  };
  return visit(value);
}

describe('definitionHash', () => {
  it('is a sha256 hex digest', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'), {
      resolveFunctions: false,
    });
    expect(definitionHash(definition)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is stable under key reordering (property)', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'), {
      resolveFunctions: false,
    });
    const expected = definitionHash(definition);
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 64 }), (choices) => {
        const shuffled = reorder(definition, choices) as WorkflowDefinition;
        expect(definitionHash(shuffled)).toBe(expected);
      }),
    );
  });

  it('is stable when reordered YAML is loaded again (property)', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'), {
      resolveFunctions: false,
    });
    const expected = definitionHash(definition);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { minLength: 1, maxLength: 16 }), async (choices) => {
        const yaml = stringify(reorder(definition, choices));
        const reloaded = await loadDefinition(yaml);
        expect(definitionHash(reloaded.definition)).toBe(expected);
      }),
      { numRuns: 25 },
    );
  });

  it('hashes the normalized form: spelled-out defaults and aliases hash the same', async () => {
    const short = await loadDefinition(
      'workflow_type: T\nsteps:\n  - {name: d, type: DECISION, function: m.f, routes: [{condition: "true", next: p}]}\n  - {name: p, type: PARALLEL, tasks: [{name: t, function_path: m.t}]}\n',
    );
    const long = await loadDefinition(
      'steps:\n  - {type: DECISION, name: d, routes: [{target: p, condition: "true"}], function: m.f}\n  - {name: p, type: PARALLEL, merge_strategy: SHALLOW, merge_conflict_behavior: PREFER_NEW, allow_partial_success: false, tasks: [{function_path: m.t, name: t}]}\nautomate_next: false\ninitial_state: {}\nworkflow_type: T\n',
    );
    expect(definitionHash(long.definition)).toBe(definitionHash(short.definition));
  });

  it('survives a JSON snapshot round trip through parseDefinitionObject', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'), {
      resolveFunctions: false,
    });
    const snapshot: unknown = JSON.parse(JSON.stringify(definition));
    const reparsed = parseDefinitionObject(snapshot);
    expect(reparsed.issues).toEqual([]);
    expect(reparsed.definition).toEqual(definition);
    expect(definitionHash(reparsed.definition as WorkflowDefinition)).toBe(
      definitionHash(definition),
    );
  });

  it('changes when any value changes', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'), {
      resolveFunctions: false,
    });
    const changed = structuredClone(definition);
    changed.initial_state = { currency: 'USD' };
    expect(definitionHash(changed)).not.toBe(definitionHash(definition));
  });
});

describe('canonicalJson', () => {
  it('equals JSON.stringify for sorted input and ignores key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(), { minLength: 1 }), (value, choices) => {
        const canonical = canonicalJson(value);
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reorder(value, choices))).toBe(canonical);
      }),
    );
  });

  it('is byte for byte the plain definition: sorted members, no whitespace (property)', () => {
    // the definition spelled out with arrays, as a reference for the one-string writer
    const plain = (value: unknown): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
      if (Array.isArray(value)) return `[${value.map((item) => plain(item)).join(',')}]`;
      const record = value as Record<string, unknown>;
      const members = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${plain(record[key])}`);
      return `{${members.join(',')}}`;
    };
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(), { minLength: 1 }), (value, choices) => {
        expect(canonicalJson(value)).toBe(plain(value));
        expect(canonicalJson(reorder(value, choices))).toBe(plain(value));
      }),
    );
  });

  it('sorts keys and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: [true, null], c: undefined, d: { z: 'x', y: -0 } })).toBe(
      '{"a":[true,null],"b":1,"d":{"y":0,"z":"x"}}',
    );
  });
});
