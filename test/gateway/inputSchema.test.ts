/**
 * A definition's `input_schema` over HTTP: data that does not match is a 422 INVALID_INPUT
 * problem listing every failing path (never the values sent), and nothing is started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const REFUNDS = `
workflow_type: schema_refunds
automate_next: true
input_schema:
  type: object
  required: [amount_minor]
  properties:
    amount_minor: { type: integer, minimum: 0 }
    reference: { type: string, maxLength: 8 }
steps:
  - { name: mark, type: STANDARD, function: steps.mark }
`;

describe.each(CLOUD_DIALECTS)('input_schema over HTTP on $name', (dialect) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(dialect, { stepsRoot: ENGINE_STEPS });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 422 with every failing path and starts nothing', async () => {
    const post = (path: string, body: unknown) =>
      gw.asUser(gw.adminToken, path, { method: 'POST', body: JSON.stringify(body) });
    expect((await post('/api/v1/workflow-definitions', { yaml: REFUNDS })).status).toBe(201);
    const refused = await post('/api/v1/workflows', {
      workflow_type: 'schema_refunds',
      data: { amount_minor: -5, reference: '4111111111111111' },
    });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    const text = await refused.text();
    expect(text).not.toContain('4111111111111111');
    expect(JSON.parse(text)).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [
        { path: '$.amount_minor', message: 'must be at least 0' },
        { path: '$.reference', message: 'must be at most 8 characters long' },
      ],
    });
    const listed = (await (
      await gw.asUser(gw.adminToken, '/api/v1/workflows?workflow_type=schema_refunds')
    ).json()) as { items?: unknown[]; workflows?: unknown[] };
    expect(listed.items ?? listed.workflows).toEqual([]);

    const ok = await post('/api/v1/workflows', {
      workflow_type: 'schema_refunds',
      data: { amount_minor: 500, reference: 'R-1' },
    });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ status: 'COMPLETED' });
  });
});
