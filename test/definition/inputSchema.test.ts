/**
 * `input_schema`: a definition that declares the data it starts with has its conditions
 * checked against it at load (paths the input cannot have, comparisons across types, at the
 * condition's line), and `start` refuses data that does not match.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { DefinitionError, loadDefinition, SaffronError } from '../../runtime/index.js';
import { engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const header = `
workflow_type: refunds
automate_next: true
input_schema:
  type: object
  required: [amount_minor]
  properties:
    amount_minor: { type: integer, minimum: 0 }
    amount: { type: integer }
    currency: { type: string, maxLength: 3 }
    customer:
      type: object
      additionalProperties: false
      properties:
        tier: { type: string }
steps:
  - name: route
    type: DECISION
    function: steps.noop
    routes:
`;
const finish = `
  - { name: review, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`;
const withCondition = (condition: string) =>
  `${header}      - { condition: "${condition}", target: review }\n      - { default: finish }${finish}`;

async function issuesOf(source: string) {
  try {
    const { warnings } = await loadDefinition(source, { resolveFunctions: false });
    return warnings;
  } catch (error) {
    if (error instanceof DefinitionError) return error.issues;
    throw error;
  }
}

describe('input_schema at load', () => {
  it('refuses a property read below a declared integer, at the condition line', async () => {
    const issues = await issuesOf(withCondition('state.amount.minor > 10000'));
    expect(issues).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'CONDITION_PATH_INVALID',
        path: 'steps[0].routes[0].condition',
        line: 21,
        column: 22,
        message: expect.stringContaining(
          "state.amount is an integer in the input schema: it has no property 'minor'",
        ) as unknown,
      }),
    ]);
  });

  it('refuses ordering a declared integer against a string literal', async () => {
    const issues = await issuesOf(withCondition("state.amount_minor > '10000'"));
    expect(issues).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'CONDITION_TYPE_MISMATCH',
        message: expect.stringContaining(
          'state.amount_minor is an integer and "10000" is a string',
        ) as unknown,
      }),
    ]);
  });

  it('warns about equality that is always false and keys a closed object cannot have', async () => {
    expect(await issuesOf(withCondition('state.currency == 978 or state.customer.vip'))).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'CONDITION_TYPE_MISMATCH',
        message: expect.stringContaining(
          "state.currency is a string and 978 is a number, so '==' is always false",
        ) as unknown,
      }),
      expect.objectContaining({ severity: 'warning', code: 'CONDITION_PATH_INVALID' }),
    ]);
  });

  it('leaves paths it knows nothing of alone: keys steps write, numbers against numbers', async () => {
    const source = withCondition(
      "state.risk.score > 0.5 and state.amount_minor >= 10000 and state.customer.tier == 'gold' and exists(state.amount.minor)",
    );
    expect(await issuesOf(source)).toEqual([]);
  });

  it('refuses a schema outside the supported subset', async () => {
    const source = withCondition('state.amount_minor > 1').replace(
      'required: [amount_minor]',
      'required: [amount_minor]\n  pattern: "^x"',
    );
    expect(await issuesOf(source)).toEqual([
      expect.objectContaining({ severity: 'error', code: 'INPUT_SCHEMA_INVALID' }),
    ]);
  });
});

for (const dialect of DIALECTS) {
  describe(`input_schema at start on ${dialect.name}`, () => {
    let handle: TestStore;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      rt = engineFor(handle);
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });

    it('starts matching data and refuses the rest with every failing path', async () => {
      const { definition } = await loadDefinition(withCondition('state.amount_minor > 10000'), {
        resolveFunctions: false,
      });
      const ok = await rt.start(definition, { amount_minor: 25_000, currency: 'EUR' });
      expect(ok.status).toBe('COMPLETED');
      expect(ok.state.visited).toEqual(['review', 'finish']);

      const refused = await rt.start(definition, { amount_minor: '25000', currency: 'EURO' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(SaffronError);
      expect(refused).toMatchObject({
        code: 'INVALID_INPUT',
        details: {
          issues: [
            { path: '$.amount_minor', message: 'expected integer, got string' },
            { path: '$.currency', message: 'must be at most 3 characters long' },
          ],
        },
      });
      await expect(rt.startMany(definition, [{ amount_minor: 1 }, {}])).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('workflow data [1]') as unknown,
      });
      expect(await rt.list({})).toHaveLength(1);
    });
  });
}
