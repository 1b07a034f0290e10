import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseFunctionPath,
  resolveStepFunction,
  StepFunctionError,
} from '../../runtime/definition/index.js';
import { FIXTURES } from './fixtures.js';

/** Call a resolved step function (user code of any signature). */
function call(fn: unknown, ...args: unknown[]): unknown {
  return (fn as (...a: unknown[]) => unknown)(...args);
}

async function failure(promise: Promise<unknown>): Promise<StepFunctionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof StepFunctionError)) throw new Error('expected a StepFunctionError');
  return error;
}

describe('parseFunctionPath', () => {
  it('splits a dotted path into module and export', () => {
    expect(parseFunctionPath('payments.checks.floor_limit')).toEqual({
      modulePath: 'payments/checks',
      exportName: 'floor_limit',
      form: 'dotted',
    });
    expect(parseFunctionPath('checks.run')).toMatchObject({
      modulePath: 'checks',
      exportName: 'run',
    });
  });

  it('splits the file#export form', () => {
    expect(parseFunctionPath('./path/to/module.js#exportName')).toEqual({
      modulePath: './path/to/module.js',
      exportName: 'exportName',
      form: 'file',
    });
    expect(parseFunctionPath('lib/x.ts#run').modulePath).toBe('lib/x.ts');
  });

  it.each([
    ['floor_limit', /module\.export/],
    ['payments..checks.f', /'' is not a module name/],
    ['payments.checks.', /'' is not an export name/],
    ['payments.1checks.f', /'1checks' is not a module name/],
    ['./lib/x.js#', /not an export name/],
    ['./lib/x.py#run', /\.js, \.mjs or \.ts/],
    ['/abs/x.js#run', /relative to the steps root/],
    ['./../outside.js#run', /'\.\.' may not leave/],
    ['lib/../../x.js#run', /'\.\.' may not leave/],
  ])('rejects %s', (input, message) => {
    let caught: unknown;
    try {
      parseFunctionPath(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StepFunctionError);
    expect((caught as StepFunctionError).code).toBe('FUNCTION_PATH_INVALID');
    expect((caught as StepFunctionError).message).toMatch(message);
  });
});

describe('resolveStepFunction', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'saffron-steps-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('resolves a dotted path to a .js module', async () => {
    const resolved = await resolveStepFunction('payments.checks.validate_card', FIXTURES);
    expect(resolved.file).toBe(path.join(FIXTURES, 'payments/checks.js'));
    expect(resolved.exportName).toBe('validate_card');
    expect(call(resolved.fn, { pan: '4111' })).toEqual({ card_valid: true });
  });

  it('falls back to .mjs and then .ts', async () => {
    const dir = path.join(scratch, 'mjs');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'm.mjs'), 'export const which = () => "mjs";\n');
    writeFileSync(path.join(dir, 'm.ts'), 'export const which = (): string => "ts";\n');
    const mjs = await resolveStepFunction('m.which', dir);
    expect(mjs.file).toBe(path.join(dir, 'm.mjs'));
    expect(call(mjs.fn)).toBe('mjs');
    const ts = await resolveStepFunction('payments.risk.score', FIXTURES);
    expect(ts.file).toBe(path.join(FIXTURES, 'payments/risk.ts'));
    expect(call(ts.fn, { amount: 5000 })).toEqual({ risk_score: 90 });
  });

  it('prefers .js over .ts when both exist', async () => {
    const dir = path.join(scratch, 'both');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'm.js'), 'export const which = () => "js";\n');
    writeFileSync(path.join(dir, 'm.ts'), 'export const which = (): string => "ts";\n');
    const resolved = await resolveStepFunction('m.which', dir);
    expect(call(resolved.fn)).toBe('js');
  });

  it('resolves the ./file.js#export form relative to the steps root', async () => {
    const resolved = await resolveStepFunction('./lib/reversal.js#reverseAuthorization', FIXTURES);
    expect(resolved.file).toBe(path.join(FIXTURES, 'lib/reversal.js'));
    expect(call(resolved.fn)).toEqual({ authorization_reversed: true });
  });

  it('reports a missing module file with the files tried', async () => {
    const error = await failure(resolveStepFunction('payments.nothing.here', FIXTURES));
    expect(error.code).toBe('FUNCTION_NOT_FOUND');
    expect(error.message).toContain(
      'tried payments/nothing.js, payments/nothing.mjs, payments/nothing.ts',
    );
    const file = await failure(resolveStepFunction('./lib/none.js#run', FIXTURES));
    expect(file.code).toBe('FUNCTION_NOT_FOUND');
  });

  it('reports a missing export and lists the exports the module has', async () => {
    const error = await failure(resolveStepFunction('payments.risk.nope', FIXTURES));
    expect(error.code).toBe('FUNCTION_NOT_FOUND');
    expect(error.message).toBe(
      "module payments/risk.ts has no export 'nope' (exports: blocklist, score)",
    );
    expect(error.details).toMatchObject({ available: ['blocklist', 'score'] });
  });

  it('reports an export that is not a function', async () => {
    const error = await failure(resolveStepFunction('payments.checks.floor_limit', FIXTURES));
    expect(error.code).toBe('FUNCTION_NOT_FOUND');
    expect(error.message).toMatch(/is a number, not a function/);
  });

  it('rejects paths that leave the steps root', async () => {
    const escape = await failure(
      resolveStepFunction('./../definitions/lib/reversal.js#x', FIXTURES),
    );
    expect(escape.code).toBe('FUNCTION_PATH_INVALID');
    const root = path.join(scratch, 'root');
    const outside = path.join(scratch, 'outside.js');
    mkdirSync(root);
    writeFileSync(outside, 'export function run() { return 1; }\n');
    symlinkSync(outside, path.join(root, 'linked.js'));
    const linked = await failure(resolveStepFunction('linked.run', root));
    expect(linked.code).toBe('FUNCTION_PATH_INVALID');
    expect(linked.message).toMatch(/outside the steps root/);
  });

  it('reports a module that fails to load', async () => {
    const dir = path.join(scratch, 'broken');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'bad.js'), 'export function run( {\n');
    const error = await failure(resolveStepFunction('bad.run', dir));
    expect(error.code).toBe('FUNCTION_NOT_FOUND');
    expect(error.message).toMatch(/failed to load/);
    expect(error.cause).toBeDefined();
  });
});
