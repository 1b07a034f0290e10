/**
 * The store-and-forward recorder on a real SQLite edge store, driven by a real runtime: the
 * record is written by the runtime's terminal commit (onSettled) — one signed record per
 * offline completion, none online unless the definition asks, neither the status nor the
 * record when that commit fails — with sequence numbers that never repeat (across restarts
 * and deletes), card data only as token + last four + an AES-256-GCM payload that decrypts
 * with the key, no card number or secret anywhere in the row, and the offline limits
 * computed from what is queued.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime, type SettledHook } from '../../actors/index.js';
import {
  createSafRecorder,
  decryptCardPayload,
  encryptCardPayload,
  readSafBacklog,
  readSyncState,
  safLimitsFromConfig,
  SYNC_STATE_KEYS,
  type SafRecorder,
  type SafRecorderEvent,
  type SafRecorderOptions,
} from '../../edge/index.js';
import {
  containsClearPan,
  ensureEdgeSchema,
  loadDefinitionFile,
  openStore,
  safRecordSchema,
  verifyTransactionRecord,
  type JsonObject,
  type SafRecord,
  type Store,
  type StoreHandle,
  type WorkflowDefinition,
} from '../../runtime/index.js';
import { openEdgeStore, type EdgeStoreHandle } from '../support/edgeComponents.js';
import { definition, ENGINE_STEPS } from '../support/engine.js';

const PAYMENTS = fileURLToPath(new URL('../../examples/payments/', import.meta.url));
const DEVICE_ID = 'term-saf-01';
const CARD = { token: 'tok_9f8e7d6c', last4: '4242', expiry: '12/29' };

/** One card payment: the floor limit of the example is 5000 minor units. */
const payment = (amount: number): JsonObject => ({
  amount_minor: amount,
  card: { ...CARD },
  terminal_id: 'T-1',
});

interface QueuedRow {
  workflow_id: string;
  device_id: string;
  sequence_number: number;
  idempotency_key: string;
  workflow_type: string;
  workflow_version: string | null;
  amount_minor: number | null;
  currency: string | null;
  record: string;
  signature: string;
  status: string;
  upload_attempts: number;
  last_error: string | null;
  created_at: string;
  synced_at: string | null;
}

const queued = async (store: StoreHandle) =>
  (
    await sql<QueuedRow>`SELECT * FROM saf_pending_transactions ORDER BY sequence_number`.execute(
      store.db,
    )
  ).rows;

const recordOf = (row: QueuedRow) => JSON.parse(row.record) as SafRecord;

describe('SAF recorder', () => {
  let edge: EdgeStoreHandle;
  let online: boolean;
  let now: Date;
  let secret: string;
  let cardKey: Buffer;
  let paymentDef: WorkflowDefinition;
  const runtimes: Runtime[] = [];
  const sanitized: SafRecorderEvent[] = [];

  const recorderFor = (options: Partial<SafRecorderOptions> = {}): SafRecorder =>
    createSafRecorder({
      deviceId: DEVICE_ID,
      deviceSecret: secret,
      isOnline: () => online,
      cardKey,
      clock: () => now,
      onEvent: (event) => sanitized.push(event),
      ...options,
    });

  const runtimeFor = (
    store: Store,
    onSettled: SettledHook,
    stepsRoot: string = PAYMENTS,
  ): Runtime => {
    const rt = createRuntime({
      store,
      stepsRoot,
      onSettled,
      onBackgroundError: (error) => {
        throw error;
      },
    });
    runtimes.push(rt);
    return rt;
  };

  beforeEach(async () => {
    edge = await openEdgeStore();
    online = false;
    now = new Date('2026-04-01T09:00:00.000Z');
    secret = randomBytes(32).toString('base64url');
    cardKey = randomBytes(32);
    sanitized.length = 0;
    paymentDef = (
      await loadDefinitionFile(`${PAYMENTS}payment_authorization.yaml`, { stepsRoot: PAYMENTS })
    ).definition;
  });
  afterEach(async () => {
    for (const rt of runtimes.splice(0)) await rt.close().catch(() => undefined);
    await edge.close();
  });

  it('runs the edge store with WAL and synchronous=FULL', () => {
    const driver = edge.store.driver;
    if (driver.dialect !== 'sqlite') throw new Error('the edge store is SQLite');
    expect(driver.database.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(driver.database.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('an offline completion writes exactly one signed record with its terminal commit', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    const wf = await rt.start(paymentDef, payment(1250));
    expect(wf.status).toBe('COMPLETED');

    const rows = await queued(edge.store);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({
      workflow_id: wf.id,
      idempotency_key: wf.id,
      device_id: DEVICE_ID,
      sequence_number: 1,
      workflow_type: 'payment_authorization',
      workflow_version: '1',
      amount_minor: 1250,
      currency: 'EUR',
      status: 'PENDING',
      upload_attempts: 0,
      last_error: null,
      synced_at: null,
      created_at: now.toISOString(),
    });
    const record = recordOf(row);
    expect(safRecordSchema.safeParse(record).success).toBe(true);
    expect(record.signature).toBe(row.signature);
    expect(verifyTransactionRecord([secret], record)).toBe(true);
    expect(verifyTransactionRecord([randomBytes(32).toString('base64url')], record)).toBe(false);
    expect(record).toMatchObject({
      workflow_id: wf.id,
      device_id: DEVICE_ID,
      workflow_type: 'payment_authorization',
      workflow_version: '1',
      device_sequence: 1,
      amount_minor: 1250,
      currency: 'EUR',
      card: { token: CARD.token, last4: CARD.last4 },
      created_at: wf.createdAt.toISOString(),
      completed_at: now.toISOString(),
    });
    expect(record.final_state).toMatchObject({
      amount_minor: 1250,
      decision: { status: 'APPROVED', mode: 'OFFLINE', reason: 'UNDER_FLOOR_LIMIT' },
      receipt: { mode: 'OFFLINE' },
    });
    expect(record.final_state).not.toHaveProperty('card');
    // the status and the record are in the database together
    expect((await rt.get(wf.id)).status).toBe('COMPLETED');
    expect((await readSyncState(edge.store, SYNC_STATE_KEYS.safLastSequence))?.value).toBe(1);
  });

  it('a commit that fails after the record was written keeps neither', async () => {
    const recorder = recorderFor();
    let failCommit = true;
    const rt = runtimeFor(edge.store, (settled) => {
      const write = recorder.onSettled(settled);
      return (
        write &&
        (async (tx) => {
          await write(tx);
          // the record is in the transaction now; the commit fails after it
          expect(await queued(tx)).toHaveLength(1);
          if (failCommit) throw new Error('disk I/O error at the terminal commit');
        })
      );
    });
    await expect(rt.start(paymentDef, payment(1250))).rejects.toThrow('disk I/O error');
    const [wf] = await rt.list({});
    expect(wf?.status).toBe('ACTIVE');
    expect(await queued(edge.store)).toEqual([]);
    expect(await readSyncState(edge.store, SYNC_STATE_KEYS.safLastSequence)).toBeUndefined();

    // the workflow goes on; its record is written once, with the number the failure gave back
    failCommit = false;
    const done = await rt.runUntilSettled(wf!.id);
    expect(done.status).toBe('COMPLETED');
    const rows = await queued(edge.store);
    expect(rows.map((r) => [r.workflow_id, r.sequence_number])).toEqual([[wf!.id, 1]]);
  });

  it('a record that cannot be written fails the terminal commit', async () => {
    await sql
      .raw(
        `CREATE TRIGGER saf_full BEFORE INSERT ON saf_pending_transactions
         BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`,
      )
      .execute(edge.store.db);
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    await expect(rt.start(paymentDef, payment(1250))).rejects.toThrow();
    const [wf] = await rt.list({});
    expect(wf?.status).toBe('ACTIVE');
    expect(wf?.currentStep).toBe('receipt');
    expect(await queued(edge.store)).toEqual([]);
    expect(await readSyncState(edge.store, SYNC_STATE_KEYS.safLastSequence)).toBeUndefined();
  });

  it('an online completion writes none; store_and_forward: true records it anyway', async () => {
    online = true;
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    const plain = await rt.start(paymentDef, { ...payment(1250), online: false });
    expect(plain.status).toBe('COMPLETED');
    expect(await queued(edge.store)).toEqual([]);

    const always: WorkflowDefinition = {
      ...paymentDef,
      workflow_type: 'payment_always_recorded',
      store_and_forward: true,
    };
    const recorded = await rt.start(always, { ...payment(900), online: false });
    expect(recorded.status).toBe('COMPLETED');
    const rows = await queued(edge.store);
    expect(rows.map((r) => [r.workflow_id, r.workflow_type, r.sequence_number])).toEqual([
      [recorded.id, 'payment_always_recorded', 1],
    ]);
  });

  it('records a payment started offline that completes after the link came back', async () => {
    online = true;
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    const started = await rt.start(paymentDef, {
      ...payment(1250),
      online: false,
      edge: { online: false, device_id: DEVICE_ID },
    });
    expect(started.status).toBe('COMPLETED');
    expect((await queued(edge.store)).map((r) => r.workflow_id)).toEqual([started.id]);
  });

  it('reads store_and_forward from definitions (YAML)', async () => {
    const yaml = `
workflow_type: always_saf
store_and_forward: true
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.noop }
`;
    const def = await definition(yaml);
    expect(def.store_and_forward).toBe(true);
    expect(
      (await definition(yaml.replace('store_and_forward: true\n', ''))).store_and_forward,
    ).toBe(false);
    online = true;
    const rt = runtimeFor(edge.store, recorderFor().onSettled, ENGINE_STEPS);
    const wf = await rt.start(def, { amount_minor: 300, currency: 'USD' });
    expect(wf.status).toBe('COMPLETED');
    expect(
      (await queued(edge.store)).map((r) => [r.workflow_id, r.amount_minor, r.currency]),
    ).toEqual([[wf.id, 300, 'USD']]);
  });

  it('records a parent once, not its sub-workflow (unless the child asks)', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled, ENGINE_STEPS);
    const child = `
workflow_type: child_flow
automate_next: true
steps:
  - { name: double, type: STANDARD, function: steps.double_seed }
`;
    rt.registry.register(await definition(child));
    const parent = await definition(`
workflow_type: parent_flow
automate_next: true
steps:
  - { name: delegate, type: STANDARD, function: steps.start_child }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
    const first = await rt.start(parent, { seed: 5 });
    await rt.drain();
    expect((await rt.get(first.id)).status).toBe('COMPLETED');
    expect((await queued(edge.store)).map((r) => r.workflow_type)).toEqual(['parent_flow']);

    rt.registry.register(await definition(`store_and_forward: true\n${child}`));
    const second = await rt.start(parent, { seed: 6 });
    await rt.drain();
    expect((await rt.get(second.id)).status).toBe('COMPLETED');
    expect((await queued(edge.store)).map((r) => r.workflow_type)).toEqual([
      'parent_flow',
      'child_flow',
      'parent_flow',
    ]);
  });

  it('a workflow that fails offline writes none', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    const wf = await rt.start(paymentDef, { ...payment(1250), amount_minor: -5 });
    expect(wf.status).toBe('FAILED');
    expect(await queued(edge.store)).toEqual([]);
  });

  it('sequence numbers only grow: across restarts, and after records are deleted', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    const first = await rt.start(paymentDef, payment(100));
    const second = await rt.start(paymentDef, payment(200));
    expect((await queued(edge.store)).map((r) => [r.workflow_id, r.sequence_number])).toEqual([
      [first.id, 1],
      [second.id, 2],
    ]);
    await rt.close();
    // synced records are pruned, then the agent restarts on the same file
    await sql`DELETE FROM saf_pending_transactions`.execute(edge.store.db);
    await edge.store.close();

    const reopened = await openStore(edge.file);
    try {
      await ensureEdgeSchema(reopened);
      const rt2 = runtimeFor(reopened, recorderFor().onSettled);
      const third = await rt2.start(paymentDef, payment(300));
      const fourth = await rt2.start(paymentDef, payment(400));
      expect((await queued(reopened)).map((r) => [r.workflow_id, r.sequence_number])).toEqual([
        [third.id, 3],
        [fourth.id, 4],
      ]);
      expect(recordOf((await queued(reopened))[1]!).device_sequence).toBe(4);
      await rt2.close();
    } finally {
      await reopened.close();
    }
  });

  it('never goes back below a queued sequence number, even without its counter', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled);
    await rt.start(paymentDef, payment(100));
    await rt.start(paymentDef, payment(200));
    await sql`DELETE FROM edge_sync_state`.execute(edge.store.db);
    const third = await rt.start(paymentDef, payment(300));
    const rows = await queued(edge.store);
    expect(rows.find((r) => r.workflow_id === third.id)?.sequence_number).toBe(3);
  });

  it('keeps card data only as token, last four and a payload that decrypts with the key', async () => {
    const pan = '4111111111111111';
    const rt = runtimeFor(edge.store, recorderFor().onSettled, ENGINE_STEPS);
    const def = await definition(`
workflow_type: card_capture
workflow_version: '3'
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.noop }
`);
    const wf = await rt.start(def, {
      amount_minor: 4200,
      currency: 'GBP',
      card: { token: 'tok_77', last4: '1111', pan, expiry: '01/30', cardholder: 'A. Payer' },
      note: `customer read out ${pan.replace(/(\d{4})(?=\d)/g, '$1 ')}`,
      emv: { track2: `;${pan}=3001101?`, CVV: '123', pin_block: '0412AC89ABCDEF67' },
      legacy_number: 4111111111111111,
      [`k${pan}`]: 'a key that is a card number',
      receipt_no: 'R-1001',
    });
    expect(wf.status).toBe('COMPLETED');

    const [row] = await queued(edge.store);
    const text = JSON.stringify(row);
    expect(containsClearPan(text)).toBe(false);
    expect(text).not.toContain(pan);
    expect(text).not.toContain('1111 1111');
    expect(text).not.toContain('A. Payer');
    expect(text).not.toContain('01/30');
    expect(text).not.toContain('0412AC89');
    expect(text).not.toContain(secret);

    const record = recordOf(row!);
    expect(record.card).toMatchObject({ token: 'tok_77', last4: '1111' });
    expect(record.final_state).toEqual({
      amount_minor: 4200,
      currency: 'GBP',
      note: '[REDACTED]',
      emv: {},
      legacy_number: '[REDACTED]',
      receipt_no: 'R-1001',
    });
    expect(verifyTransactionRecord([secret], record)).toBe(true);

    const card = decryptCardPayload(cardKey, record.card!.encrypted_payload, wf.id);
    expect(card).toEqual({
      token: 'tok_77',
      last4: '1111',
      pan,
      expiry: '01/30',
      cardholder: 'A. Payer',
    });
    expect(() =>
      decryptCardPayload(randomBytes(32), record.card!.encrypted_payload, wf.id),
    ).toThrow(expect.objectContaining({ code: 'SAF_PAYLOAD_INVALID' }));
    // bound to its workflow: the payload cannot be moved to another record
    expect(() => decryptCardPayload(cardKey, record.card!.encrypted_payload, randomUUID())).toThrow(
      expect.objectContaining({ code: 'SAF_PAYLOAD_INVALID' }),
    );

    expect(sanitized).toEqual([
      {
        type: 'edge.saf.sanitized',
        workflowId: wf.id,
        paths: expect.arrayContaining([
          '$.note',
          '$.emv.track2',
          '$.emv.CVV',
          '$.emv.pin_block',
          '$.legacy_number',
          '$ (a key)',
        ]) as unknown,
      },
    ]);
    for (const path of (sanitized[0] as { paths: string[] }).paths)
      expect(containsClearPan(path)).toBe(false);
  });

  it('refuses an untokenized card: the workflow does not complete and nothing is queued', async () => {
    const rt = runtimeFor(edge.store, recorderFor().onSettled, ENGINE_STEPS);
    const def = await definition(`
workflow_type: raw_card
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.noop }
`);
    const cases: JsonObject[] = [
      { card: { number: '4111111111111111' } },
      { card: { token: '4111111111111111', last4: '1111' } },
      { card: { token: 'tok_1', last4: '11' } },
      { card: 'tok_1' },
    ];
    for (const data of cases) {
      const error = await rt.start(def, data).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SafError', code: 'SAF_CARD_INVALID' });
      expect(String((error as Error).message)).not.toContain('4111111111111111');
    }
    expect((await rt.list({})).map((w) => w.status)).toEqual([
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
    ]);
    expect(await queued(edge.store)).toEqual([]);
  });

  it('gives every card payload an iv of its own, across blocks of drawn ivs', () => {
    const key = randomBytes(32);
    const ivs = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const id = randomUUID();
      const payload = encryptCardPayload(key, { token: `tok_${i}`, last4: '4242' }, id);
      ivs.add(Buffer.from(payload, 'base64').subarray(0, 12).toString('hex'));
      expect(decryptCardPayload(key, payload, id)).toEqual({ token: `tok_${i}`, last4: '4242' });
    }
    expect(ivs.size).toBe(600);
  });

  it('refuses a card key that is not 32 bytes', () => {
    expect(() => recorderFor({ cardKey: randomBytes(16) })).toThrow(
      expect.objectContaining({ code: 'SAF_KEY_INVALID' }),
    );
  });

  it('reports the backlog and judges the offline limits from what is queued', async () => {
    const recorder = recorderFor();
    const rt = runtimeFor(edge.store, recorder.onSettled);
    expect(await recorder.backlog(edge.store)).toEqual({
      count: 0,
      amountMinor: 0,
      oldestCreatedAt: null,
    });
    expect(
      await recorder.checkLimits(
        edge.store,
        { amountMinor: 1000, currency: 'EUR' },
        { maxUnsentAmountMinor: 1000, maxRecords: 1, maxAgeSeconds: 60 },
      ),
    ).toEqual({ ok: true });

    const queuedAt = now;
    await rt.start(paymentDef, payment(1250));
    now = new Date(queuedAt.getTime() + 600_000);
    const second = await rt.start(paymentDef, payment(3000));
    expect(await recorder.backlog(edge.store)).toEqual({
      count: 2,
      amountMinor: 4250,
      oldestCreatedAt: queuedAt.toISOString(),
    });

    const verdict = (
      amountMinor: number | null,
      limits: Parameters<SafRecorder['checkLimits']>[2],
    ) => recorder.checkLimits(edge.store, { amountMinor, currency: 'EUR' }, limits);
    expect(await verdict(750, { maxUnsentAmountMinor: 5000 })).toEqual({ ok: true });
    expect(await verdict(751, { maxUnsentAmountMinor: 5000 })).toMatchObject({
      ok: false,
      code: 'SAF_AMOUNT_LIMIT',
    });
    expect(await verdict(null, { maxUnsentAmountMinor: 5000 })).toEqual({ ok: true });
    expect(await verdict(null, { maxUnsentAmountMinor: 4250 })).toMatchObject({
      ok: false,
      code: 'SAF_AMOUNT_LIMIT',
    });
    expect(await verdict(1, { maxRecords: 3 })).toEqual({ ok: true });
    expect(await verdict(1, { maxRecords: 2 })).toMatchObject({
      ok: false,
      code: 'SAF_COUNT_LIMIT',
    });
    now = new Date(queuedAt.getTime() + 3_600_000);
    expect(await verdict(1, { maxAgeSeconds: 3600 })).toEqual({ ok: true });
    now = new Date(queuedAt.getTime() + 3_601_000);
    const aged = await verdict(1, { maxAgeSeconds: 3600 });
    expect(aged).toMatchObject({ ok: false, code: 'SAF_AGE_LIMIT' });
    expect(aged.ok ? '' : aged.message).toContain('3601 s');
    expect(await verdict(1, {})).toEqual({ ok: true });

    // what the cloud accepted or refused is no longer at risk on the device
    await sql`UPDATE saf_pending_transactions SET status = 'SYNCED' WHERE workflow_id != ${second.id}`.execute(
      edge.store.db,
    );
    expect(await recorder.backlog(edge.store)).toEqual({
      count: 1,
      amountMinor: 3000,
      oldestCreatedAt: new Date(queuedAt.getTime() + 600_000).toISOString(),
    });
    expect(await verdict(1, { maxRecords: 2, maxAgeSeconds: 3600 })).toEqual({ ok: true });
  });

  it('keeps the backlog totals in step with the records, and recomputes them at start', async () => {
    const recorder = recorderFor();
    const rt = runtimeFor(edge.store, recorder.onSettled);
    const ids: string[] = [];
    for (const amount of [1250, 3000, 700, 40])
      ids.push((await rt.start(paymentDef, payment(amount))).id);
    // what the backlog reads, against a sum over the records themselves
    const figures = async () => {
      const backlog = await readSafBacklog(edge.store);
      const summed = await sql<{ count: number; amount: number; exposure: number }>`
        SELECT count(*) AS count, COALESCE(SUM(amount_minor), 0) AS amount,
          COALESCE(SUM(ABS(amount_minor)), 0) AS exposure
        FROM saf_pending_transactions WHERE status = 'PENDING'`.execute(edge.store.db);
      const { count, amount, exposure } = summed.rows[0]!;
      expect([backlog.count, backlog.amountMinor, backlog.exposureMinor]).toEqual([
        count,
        amount,
        exposure,
      ]);
      return [count, amount, exposure];
    };
    const totalsRow = async () =>
      (await readSyncState(edge.store, SYNC_STATE_KEYS.safBacklogTotals))?.value;
    expect(await figures()).toEqual([4, 4990, 4990]);
    expect(await totalsRow()).toEqual([4, 4990, 4990]);

    const set = (text: string, id: string) =>
      sql`UPDATE saf_pending_transactions SET ${sql.raw(text)} WHERE workflow_id = ${id}`.execute(
        edge.store.db,
      );
    await set(`status = 'SYNCED'`, ids[0]!); // uploaded
    await set(`status = 'REJECTED'`, ids[1]!); // refused by the cloud
    expect(await figures()).toEqual([2, 740, 740]);
    await set(`status = 'PENDING'`, ids[1]!); // an operator sends it again
    await set(`amount_minor = -700`, ids[2]!); // a refund
    await set(`upload_attempts = upload_attempts + 1, last_error = 'offline'`, ids[3]!);
    expect(await figures()).toEqual([3, 2340, 3740]);
    await set(`amount_minor = NULL`, ids[3]!);
    await sql`DELETE FROM saf_pending_transactions WHERE workflow_id IN (${ids[0]!}, ${ids[2]!})`.execute(
      edge.store.db,
    );
    expect(await figures()).toEqual([2, 3000, 3000]);

    // a lost or wrong row: the start-up schema pass recomputes it from the records
    await sql`UPDATE edge_sync_state SET value = '[0,0,0]' WHERE key = ${SYNC_STATE_KEYS.safBacklogTotals}`.execute(
      edge.store.db,
    );
    await ensureEdgeSchema(edge.store);
    expect(await totalsRow()).toEqual([2, 3000, 3000]);
    await sql`DELETE FROM edge_sync_state WHERE key = ${SYNC_STATE_KEYS.safBacklogTotals}`.execute(
      edge.store.db,
    );
    expect(await figures()).toEqual([2, 3000, 3000]); // summed from the records meanwhile
    await ensureEdgeSchema(edge.store);
    expect(await totalsRow()).toEqual([2, 3000, 3000]);
  });

  it('reads the limits from the device configuration and refuses a malformed section', () => {
    expect(safLimitsFromConfig({})).toEqual({});
    expect(safLimitsFromConfig({ config_poll_interval_seconds: 60 })).toEqual({});
    expect(
      safLimitsFromConfig({
        store_and_forward: {
          max_unsent_amount_minor: 50000,
          max_records: 200,
          max_age_seconds: 86400,
        },
      }),
    ).toEqual({ maxUnsentAmountMinor: 50000, maxRecords: 200, maxAgeSeconds: 86400 });
    expect(safLimitsFromConfig({ store_and_forward: { max_records: 0 } })).toEqual({
      maxRecords: 0,
    });

    const refused = (section: unknown) => {
      try {
        safLimitsFromConfig({ store_and_forward: section });
      } catch (error) {
        return error as { code: string; details: { issues: { path: string; message: string }[] } };
      }
      throw new Error('accepted');
    };
    expect(refused({ max_records: -1 })).toMatchObject({
      code: 'SAF_LIMITS_INVALID',
      details: { issues: [{ path: '$.store_and_forward.max_records' }] },
    });
    expect(refused({ max_unsent_amount_minor: '500' }).details.issues[0]?.path).toBe(
      '$.store_and_forward.max_unsent_amount_minor',
    );
    expect(refused({ max_age_seconds: 0 }).code).toBe('SAF_LIMITS_INVALID');
    expect(refused({ max_record: 5 }).details.issues[0]?.message).toContain('max_record');
    expect(refused('on').code).toBe('SAF_LIMITS_INVALID');
  });
});
