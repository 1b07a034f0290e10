/**
 * Step contexts: `signal` is made on first read (one per context), an abort that comes
 * before that read is kept, `log` (when made on first read too) writes to its own step's
 * effects, and the scope expressions and templates see is plain data without `signal`,
 * `secrets` or `log`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  contextScope,
  createStepLogger,
  mapSecrets,
  noEffects,
  stepAbort,
  withSignal,
  withSignalAndLog,
  type StepContext,
} from '../../runtime/index.js';

const Original = globalThis.AbortController;
let made = 0;

/** Count AbortControllers made from here on. */
function countControllers() {
  made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
}

/** What a context holds besides its signal, secrets and logger. */
const FIELDS = {
  workflowId: 'wf-1',
  workflowType: 'ctx_test',
  stepName: 'one',
  attempt: 1,
  idempotencyKey: 'wf-1:one:1',
  input: { approved: true },
};

const context = (): StepContext =>
  withSignal({
    ...FIELDS,
    secrets: mapSecrets({ TOKEN: 'secret' }),
    log: createStepLogger(noEffects(), 'one'),
  });

describe('step context', () => {
  afterEach(() => {
    globalThis.AbortController = Original;
  });

  it('makes its signal when a step first reads it, once, and one per context', () => {
    countControllers();
    const a = context();
    const b = context();
    expect(made).toBe(0);
    const signal = a.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
    expect(a.signal).toBe(signal);
    expect(made).toBe(1);
    expect(b.signal).not.toBe(signal);
    expect(made).toBe(2);
    expect(Object.keys(a)).toContain('signal');
  });

  it('gives expressions and templates plain data, without reading the signal', () => {
    countControllers();
    const c = context();
    expect(contextScope(c)).toEqual(FIELDS);
    expect(made).toBe(0);
  });

  it('keeps an abort that comes before the signal is read, and makes the signal aborted', () => {
    countControllers();
    const abort = stepAbort();
    const c = withSignal({ ...FIELDS }, abort);
    const first = new Error('lost');
    abort.abort(first);
    abort.abort(new Error('again'));
    expect(made).toBe(0);
    expect(c.signal.aborted).toBe(true);
    expect(c.signal.reason).toBe(first);
    expect(made).toBe(1);
  });

  it('gives a context made with its logger on first read the same logger each time, writing to its step', () => {
    countControllers();
    const effects = noEffects();
    const other = noEffects();
    const c: StepContext = withSignalAndLog({ ...FIELDS, secrets: mapSecrets({}) }, effects, 'one');
    const d: StepContext = withSignalAndLog({ ...FIELDS, secrets: mapSecrets({}) }, other, 'two');
    expect(Object.keys(c)).toEqual(expect.arrayContaining(['signal', 'log']));
    expect(contextScope(c)).toEqual(FIELDS);
    expect(c.log).toBe(c.log);
    expect(c.log).not.toBe(d.log);
    c.log('plain');
    c.log.warn('careful', { n: 1 });
    d.log.error('broken');
    expect(effects.logs).toEqual([
      { stepName: 'one', level: 'info', message: 'plain' },
      { stepName: 'one', level: 'warn', message: 'careful', data: { n: 1 } },
    ]);
    expect(other.logs).toEqual([{ stepName: 'two', level: 'error', message: 'broken' }]);
    expect(made).toBe(0); // logging reads no signal
    expect(c.signal).not.toBe(d.signal);
  });

  it('aborts a signal already read, once', () => {
    const abort = stepAbort();
    const c = withSignal({ ...FIELDS }, abort);
    const { signal } = c;
    let events = 0;
    signal.addEventListener('abort', () => events++);
    const first = new Error('lost');
    abort.abort(first);
    abort.abort(new Error('again'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(first);
    expect(events).toBe(1);
  });
});
