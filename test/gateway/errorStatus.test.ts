/**
 * Every error code the engine can raise has a status the API answers with: a caller's
 * mistake is a 4xx problem (503 when the database is away), never the bare 500 kept for
 * the server's own faults. The codes are read from the engine's sources — every
 * `new …Error('CODE'` and `super('CODE'` under runtime/ and actors/, and the closed code
 * lists — so a code added later is walked without touching this file. The few codes that
 * are the server's fault are listed here by name, each with why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toProblem } from '../../gateway/problem.js';
import {
  DEFINITION_ISSUE_CODES,
  HTTP_STEP_ERROR_CODES,
  INFERENCE_ERROR_CODES,
  SaffronError,
  STEP_ERROR_CODES,
  WASM_ERROR_CODES,
  WORKFLOW_ERROR_CODES,
} from '../../runtime/index.js';
import { ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Codes that mean the server failed (answered 500 INTERNAL), and why each is not the caller's. */
const INTERNAL: Readonly<Record<string, string>> = {
  SNAPSHOT_INVALID: 'a stored workflow snapshot no longer restores',
  BATCH_SNAPSHOT_INVALID: 'a stored command batch snapshot no longer restores',
  BROADCAST_SNAPSHOT_INVALID: 'a stored broadcast snapshot no longer restores',
  STORE_ERROR: 'the database failed in a way that is not a conflict or an outage',
  STORE_CONFIG: 'the server was started with a bad store configuration',
  SCHEMA_DIALECT: 'a SQLite-only operation was given another store',
  MIGRATION_DIALECT: 'migrations run at start-up, not per request',
  MIGRATION_FAILED: 'migrations run at start-up, not per request',
  MIGRATION_UNKNOWN_VERSION: 'migrations run at start-up, not per request',
  DEFINITION_NOT_FOUND: 'a definition file the server itself was told to read',
  DATA_DIR_LOCKED: 'the embedded database is opened at start-up, not per request',
  EXECUTOR_CLOSED: 'the server is shutting its step executor down',
  THREAD_FAILED: 'a worker thread of the server died',
  THREAD_RESULT_NOT_CLONEABLE: 'a step ran; its failure is recorded on the workflow',
  DEPENDENCY_MISSING: 'the server was installed without an optional package a feature needs',
  INSPECT_URL_INVALID: 'the inspector URL is given when a process starts, not per request',
  // raised while a step runs: recorded on the workflow as the step's failure, never a request's
  ...Object.fromEntries(
    [
      ...STEP_ERROR_CODES.filter((code) => code !== 'STEP_INPUT_INVALID'),
      ...HTTP_STEP_ERROR_CODES,
      ...WASM_ERROR_CODES,
      ...INFERENCE_ERROR_CODES,
      'FUNCTION_NOT_FOUND',
      'FUNCTION_PATH_INVALID',
    ].map((code) => [code, 'a step failure: recorded on the workflow, not thrown to a request']),
  ),
};

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => readFileSync(join(ROOT, dir, file), 'utf8'));
}

/** Every code the engine raises: literal codes of its error constructors and its code lists. */
function raisedCodes(): string[] {
  const literal = /(?:new [A-Za-z]*Error|super)\(\s*'([A-Z][A-Z0-9_]+)'/g;
  const found = new Set<string>([
    ...WORKFLOW_ERROR_CODES,
    ...STEP_ERROR_CODES,
    ...HTTP_STEP_ERROR_CODES,
    ...WASM_ERROR_CODES,
    ...INFERENCE_ERROR_CODES,
  ]);
  for (const source of [...sourcesUnder('runtime'), ...sourcesUnder('actors')])
    for (const match of source.matchAll(literal)) found.add(match[1]!);
  // definition issues are reported inside DEFINITION_INVALID, not raised on their own
  for (const issue of DEFINITION_ISSUE_CODES) if (!INTERNAL[issue]) found.delete(issue);
  return [...found].sort();
}

describe('error codes and their HTTP statuses', () => {
  const codes = raisedCodes();

  it('finds the engine codes, among them the ones requests meet', () => {
    expect(codes).toEqual(
      expect.arrayContaining(['UNKNOWN_STEP', 'WORKFLOW_NOT_FOUND', 'CONFLICT', 'MERGE_CONFLICT']),
    );
  });

  it.each(codes.filter((code) => INTERNAL[code] === undefined))(
    '%s is a 4xx problem (or 503), not a 500',
    (code) => {
      const problem = toProblem(new SaffronError(code, 'x'));
      expect(problem?.code).toBe(code);
      expect(problem!.status === 503 || (problem!.status >= 400 && problem!.status < 500)).toBe(
        true,
      );
    },
  );

  it('the internal list names only codes the engine raises, each answered 500', () => {
    for (const code of Object.keys(INTERNAL)) {
      expect(codes).toContain(code);
      expect(toProblem(new SaffronError(code, 'x'))).toBeUndefined();
    }
  });
});

const FAILING = `
workflow_type: status_failing
automate_next: true
steps:
  - { name: boom, type: STANDARD, function: steps.always_fail }
`;

describe.each(CLOUD_DIALECTS)('retry from an unknown step on $name', (dialect) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(dialect, { stepsRoot: ENGINE_STEPS });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 422 UNKNOWN_STEP', async () => {
    const post = (path: string, body: unknown) =>
      gw.asUser(gw.adminToken, path, { method: 'POST', body: JSON.stringify(body) });
    expect((await post('/api/v1/workflow-definitions', { yaml: FAILING })).status).toBe(201);
    const started = (await (
      await post('/api/v1/workflows', { workflow_type: 'status_failing' })
    ).json()) as { id: string; status: string };
    expect(started.status).toBe('FAILED');
    const retried = await post(`/api/v1/workflows/${started.id}/retry`, { from_step: 'nope' });
    expect(retried.status).toBe(422);
    expect(retried.headers.get('content-type')).toContain('application/problem+json');
    expect(await retried.json()).toMatchObject({ code: 'UNKNOWN_STEP' });
  });
});
