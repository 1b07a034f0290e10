/**
 * The workflow YAML reference stays true: every YAML block tagged `saffron-reference` loads
 * with the definition loader (functions not imported: they belong to the reader's project),
 * and together they use all 11 step kinds.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadDefinition, STEP_KINDS, type StepDefinition } from '../../runtime/index.js';

const reference = readFileSync(
  new URL('../../docs/reference/workflow-yaml.md', import.meta.url),
  'utf8',
);
const blocks = [...reference.matchAll(/```yaml saffron-reference\n([\s\S]*?)```/g)].map(
  (m) => m[1]!,
);

const kindsOf = (steps: readonly StepDefinition[]): string[] =>
  steps.flatMap((s) => [s.type, ...(s.type === 'LOOP' ? kindsOf(s.loop_body) : [])]);

describe('workflow YAML reference', () => {
  it('has reference blocks that load and cover every step kind', async () => {
    expect(blocks.length).toBeGreaterThan(0);
    const kinds = new Set<string>();
    for (const block of blocks) {
      const { definition } = await loadDefinition(block, { resolveFunctions: false });
      for (const kind of kindsOf(definition.steps)) kinds.add(kind);
    }
    expect([...kinds].sort()).toEqual([...STEP_KINDS].sort());
  });
});
