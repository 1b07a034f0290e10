/**
 * WASM steps inside real workflows, on every store dialect: binaries resolved from
 * device_wasm_cache on SQLite and from wasm_components + WASM_STORAGE_DIR on PGlite and
 * PostgreSQL (the store's default source). The guest's output is merged with the step's merge
 * rules; `state_mapping` picks what the guest sees; every `fallback_on_error` path; a tampered
 * binary; a timeout that kills the guest's thread, after which the next workflow still runs;
 * and warm calls reusing the thread's compiled module, as recorded in the step logs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import {
  cacheWasmBinary,
  registerWasmComponent,
  storeWasmSource,
  type JsonObject,
  type WorkflowRecord,
  asEdge,
} from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';
import {
  clangAvailable,
  compileC,
  compileWatGuests,
  FRAUD_SCORER_C,
  tampered,
  type Guest,
  type WatGuestName,
  wasmFlow,
} from '../support/wasmGuests.js';

let guests: Record<WatGuestName, Guest>;
let scorer: Guest | undefined;
beforeAll(async () => {
  guests = await compileWatGuests();
  if (clangAvailable) scorer = compileC(FRAUD_SCORER_C);
});

for (const dialect of DIALECTS) {
  describe(`WASM steps on ${dialect.name}`, () => {
    let handle: TestStore;
    let storageDir: string;
    let rt: Runtime;
    let counter = 0;

    /** Put a guest where this store resolves binaries. */
    async function store(guest: Guest): Promise<void> {
      if (handle.store.dialect === 'sqlite') await cacheWasmBinary(handle.store, guest.bytes);
      else
        await registerWasmComponent(
          handle.store,
          guest.bytes,
          { name: `guest-${counter}`, versionTag: '1.0.0' },
          { storageDir },
        );
    }

    /** Replace the stored bytes of `guest` (same hash, different bytes) or put them back. */
    async function overwrite(guest: Guest, bytes: Uint8Array): Promise<void> {
      if (handle.store.dialect === 'sqlite')
        await asEdge(handle.store)
          .edge.updateTable('device_wasm_cache')
          .set({ binary_data: bytes })
          .where('binary_hash', '=', guest.hash)
          .execute();
      else writeFileSync(join(storageDir, `${guest.hash}.wasm`), bytes);
    }

    async function run(yaml: string, data: JsonObject = {}): Promise<WorkflowRecord> {
      const def = await definition(yaml);
      const started = await rt.start(def, data);
      return rt.runUntilSettled(started.id);
    }

    async function failure(wf: WorkflowRecord) {
      const failed = (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED');
      return failed?.eventData.error as { code: string; message: string; step: string };
    }

    async function logs(wf: WorkflowRecord) {
      const rows = await handle.store.db
        .selectFrom('workflow_execution_logs')
        .select(['level', 'message', 'data'])
        .where('workflow_id', '=', wf.id)
        .orderBy('id')
        .execute();
      return rows.map((r) => ({
        level: r.level,
        message: r.message,
        data: handle.store.codec.parseJson(r.data) as JsonObject,
      }));
    }

    beforeAll(async () => {
      handle = await openWithSchema(dialect);
      storageDir = mkdtempSync(join(tmpdir(), 'saffron-wasm-flow-'));
      for (const guest of Object.values(guests)) {
        counter++;
        await store(guest);
      }
      if (scorer) await store(scorer);
      rt = engineFor(handle, {
        // SQLite: the default source (device_wasm_cache); cloud: the registry under storageDir.
        ...(handle.store.dialect === 'sqlite'
          ? {}
          : { wasmSource: storeWasmSource(handle.store, { storageDir }) }),
        wasm: { maxThreads: 1, memoryLimitMb: 16 },
      });
    });

    afterAll(async () => {
      await rt?.close();
      await handle?.close();
      rmSync(storageDir, { recursive: true, force: true });
    });

    it('merges the guest’s JSON output into state; the guest reads the whole state', async () => {
      const data = { amount_minor: 1250, card: { last4: '4242' } };
      const wf = await run(wasmFlow('wasm_echo', guests.echo.hash), data);
      expect(wf.status).toBe('COMPLETED');
      expect(wf.state).toEqual({ ...data, echo: data, guest: 'wat' });
      const trail = await rt.audit(wf.id);
      expect(trail.map((e) => e.eventType)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('passes only the mapped keys, renamed, with state_mapping', async () => {
      const wf = await run(
        wasmFlow(
          'wasm_mapped',
          guests.echo.hash,
          `state_mapping: { transaction: txn, attempts: count, absent: never }`,
        ),
        { transaction: { amount_minor: 5 }, attempts: 2, pan: '4111111111111111' },
      );
      expect(wf.status).toBe('COMPLETED');
      expect(wf.state.echo).toEqual({ txn: { amount_minor: 5 }, count: 2 });
    });

    it('applies the step’s merge rules; a RAISE_ERROR conflict fails the step whatever the fallback', async () => {
      const keep = await run(
        wasmFlow(
          'wasm_prefer_existing',
          guests.echo.hash,
          '',
          'merge_conflict_behavior: PREFER_EXISTING',
        ),
        { guest: 'js' },
      );
      expect(keep.state).toMatchObject({ guest: 'js', echo: { guest: 'js' } });

      const deep = await run(wasmFlow('wasm_deep', guests.echo.hash, '', 'merge_strategy: DEEP'), {
        echo: { earlier: true },
      });
      expect(deep.state.echo).toEqual({ earlier: true, echo: { earlier: true } });

      const conflict = await run(
        wasmFlow(
          'wasm_conflict',
          guests.echo.hash,
          'fallback_on_error: skip',
          'merge_conflict_behavior: RAISE_ERROR',
        ),
        { guest: 'js' },
      );
      expect(conflict.status).toBe('FAILED');
      expect(await failure(conflict)).toMatchObject({ code: 'STEP_RESULT_INVALID' });
    });

    it('fallback fail: the step fails naming the step, the module hash and the cause', async () => {
      const wf = await run(wasmFlow('wasm_fail', guests.exit7.hash), { keep: 'me' });
      expect(wf).toMatchObject({ status: 'FAILED', currentStep: 'score', state: { keep: 'me' } });
      const error = await failure(wf);
      expect(error).toEqual({
        code: 'WASM_EXIT_NONZERO',
        step: 'score',
        message: `WASM step 'score' (module ${guests.exit7.hash}): exit code 7`,
      });
      expect(await logs(wf)).toContainEqual({
        level: 'error',
        message: error.message,
        data: { code: 'WASM_EXIT_NONZERO', stderr: 'card declined by rule 7\n' },
      });
      const invalid = await run(wasmFlow('wasm_fail_json', guests.notJson.hash));
      expect(await failure(invalid)).toMatchObject({
        code: 'WASM_OUTPUT_INVALID',
        message: expect.stringContaining(
          `(module ${guests.notJson.hash}): stdout is not valid JSON`,
        ) as string,
      });
      const missing = await run(wasmFlow('wasm_fail_missing', 'ab'.repeat(32)));
      expect(await failure(missing)).toMatchObject({ code: 'WASM_MODULE_NOT_FOUND' });
      const trapped = await run(wasmFlow('wasm_fail_trap', guests.trap.hash));
      expect(await failure(trapped)).toMatchObject({
        code: 'WASM_TRAP',
        message: expect.stringContaining('trap: unreachable') as string,
      });
    });

    it('fallback skip: the step succeeds with {} and the workflow continues', async () => {
      const data = { amount_minor: 99 };
      for (const [name, hash] of [
        ['exit', guests.exit7.hash],
        ['json', guests.notJson.hash],
        ['missing', 'cd'.repeat(32)],
        ['flood', guests.flood.hash],
      ] as const) {
        const wf = await run(wasmFlow(`wasm_skip_${name}`, hash, 'fallback_on_error: skip'), data);
        expect(wf.status, name).toBe('COMPLETED');
        expect(wf.state, name).toEqual(data);
        expect(
          (await logs(wf)).map((l) => l.level),
          name,
        ).toEqual(['warn']);
      }
    });

    it('fallback default: the step succeeds with default_result (merged), or {} without one', async () => {
      const wf = await run(
        wasmFlow(
          'wasm_default',
          guests.exit7.hash,
          `fallback_on_error: default
           default_result: { fraud_score: 50, fraud_decision: review }`,
        ),
        { amount_minor: 7 },
      );
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        state: { amount_minor: 7, fraud_score: 50, fraud_decision: 'review' },
      });
      const bare = await run(
        wasmFlow('wasm_default_bare', guests.array.hash, 'fallback_on_error: default'),
        { amount_minor: 7 },
      );
      expect(bare).toMatchObject({ status: 'COMPLETED', state: { amount_minor: 7 } });
    });

    it('refuses a tampered binary (hash mismatch), then falls back or fails', async () => {
      const good = await run(wasmFlow('wasm_tamper_before', guests.both.hash));
      expect(good.state).toEqual({ ran: '_start' });
      await overwrite(guests.both, tampered(guests.both));
      try {
        const failed = await run(wasmFlow('wasm_tamper', guests.both.hash));
        expect(failed.status).toBe('FAILED');
        expect(await failure(failed)).toMatchObject({
          code: 'WASM_HASH_MISMATCH',
          message: expect.stringContaining(`(module ${guests.both.hash})`) as string,
        });
        const defaulted = await run(
          wasmFlow(
            'wasm_tamper_default',
            guests.both.hash,
            `fallback_on_error: default
             default_result: { ran: fallback }`,
          ),
        );
        expect(defaulted).toMatchObject({ status: 'COMPLETED', state: { ran: 'fallback' } });
      } finally {
        await overwrite(guests.both, guests.both.bytes);
      }
      expect((await run(wasmFlow('wasm_tamper_after', guests.both.hash))).state).toEqual({
        ran: '_start',
      });
    });

    it('times out a spinning guest by killing its thread; the next workflow runs', async () => {
      const spun = await run(wasmFlow('wasm_timeout', guests.loop.hash, 'timeout_ms: 100'));
      expect(spun.status).toBe('FAILED');
      expect(await failure(spun)).toMatchObject({
        code: 'WASM_TIMEOUT',
        message: `WASM step 'score' (module ${guests.loop.hash}): timed out after 100 ms; the worker thread running it was terminated`,
      });
      const defaulted = await run(
        wasmFlow(
          'wasm_timeout_default',
          guests.loop.hash,
          `timeout_ms: 100
           fallback_on_error: default
           default_result: { timed_out: true }`,
        ),
      );
      expect(defaulted).toMatchObject({ status: 'COMPLETED', state: { timed_out: true } });
      const next = await run(wasmFlow('wasm_after_timeout', guests.echo.hash), { n: 1 });
      expect(next).toMatchObject({ status: 'COMPLETED', state: { echo: { n: 1 } } });
    });

    it('reuses the compiled module on warm calls (per-thread compile flag in the step log)', async () => {
      const flows = [];
      for (let i = 0; i < 3; i++)
        flows.push(await run(wasmFlow('wasm_warm', guests.reactor.hash), { i }));
      const ran = await Promise.all(
        flows.map(
          async (wf) => (await logs(wf)).find((l) => l.message === 'WASM module ran')!.data,
        ),
      );
      expect(new Set(ran.map((d) => d.thread_id)).size).toBe(1);
      expect(ran.slice(1).map((d) => d.compiled)).toEqual([false, false]);
      expect(ran.every((d) => d.wasm_hash === guests.reactor.hash)).toBe(true);
    });

    it.skipIf(!clangAvailable)(
      'scores a payment with a C guest and routes on its decision',
      async () => {
        const yaml = `
workflow_type: wasm_fraud
automate_next: true
steps:
  - name: fraud_check
    type: WASM
    wasm_config:
      wasm_hash: ${scorer?.hash ?? ''}
      state_mapping: { amount_minor: amount_minor, country: country, card_present: card_present }
      timeout_ms: 2000
      fallback_on_error: default
      default_result: { fraud_score: 100, fraud_decision: review }
  - name: route
    type: DECISION
    function: steps.noop
    routes:
      - { condition: "fraud_decision == 'decline'", target: reject }
      - { default: finish }
  - { name: reject, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`;
        const risky = await run(yaml, {
          amount_minor: 250_000,
          country: 'US',
          card_present: false,
          pan: 'x',
        });
        expect(risky).toMatchObject({
          status: 'COMPLETED',
          state: { fraud_score: 80, fraud_decision: 'decline', visited: ['reject', 'finish'] },
        });
        const fine = await run(yaml, { amount_minor: 1250, country: 'DE', card_present: true });
        expect(fine).toMatchObject({
          status: 'COMPLETED',
          state: { fraud_score: 0, fraud_decision: 'approve', visited: ['finish'] },
        });
        const broken = await run(yaml, { country: 'DE' });
        expect(broken).toMatchObject({
          status: 'COMPLETED',
          state: { fraud_score: 100, fraud_decision: 'review', visited: ['finish'] },
        });
      },
    );
  });
}
