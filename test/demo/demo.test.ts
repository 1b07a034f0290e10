/**
 * The fleet demo (`npm start`): a short run on embedded PGlite with real edge agents, network
 * cuts and the mid-run rollouts ends with every offline record in the cloud exactly once; and
 * the closing check itself catches a record that went missing, one that should not be there,
 * and one still waiting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../bin/demo/runDemo.js';
import { verifyExactlyOnce } from '../../bin/demo/verifyDemo.js';
import { asEdge, ensureEdgeSchema, openStore } from '../../runtime/index.js';
import { seededRandom } from '../chaos/seededRandom.js';
import { CLOUD_DIALECTS, openWithSchema } from '../support/stores.js';

const sink = () => {
  let text = '';
  return { write: (t: string) => void (text += t), text: () => text };
};

describe('saffron demo', () => {
  it('runs payments through outages and rollouts, and settles every offline record once', async () => {
    const out = sink();
    const err = sink();
    const result = await runDemo(
      {
        devices: 4,
        port: 0,
        durationSeconds: 24,
        paymentGapSeconds: 0.4,
        random: seededRandom(7),
        stopRequested: new Promise(() => {}),
      },
      { stdout: out, stderr: err, env: {}, cwd: process.cwd() },
    );
    const p = result.payments;
    expect(p.approvedOnline).toBeGreaterThan(0);
    expect(p.approvedOffline).toBeGreaterThan(0);
    // the fraud rules v2 rollout (sync_wasm + update_workflow broadcasts) reached every terminal
    expect(result.upgraded).toBe(4);
    // and the cloud settled stores' shifts with its own workflows (queued task on its worker)
    expect(result.settlements.COMPLETED).toBeGreaterThan(0);
    expect(result.verdict).toMatchObject({
      ok: true,
      pending: 0,
      missing: [],
      unexpected: [],
      duplicated: [],
    });
    // every offline approval left a record, and the cloud holds each of them
    expect(result.verdict.deviceRecords).toBeGreaterThanOrEqual(p.approvedOffline);
    expect(result.verdict.cloudRecords).toBe(
      result.verdict.deviceRecords - result.verdict.rejected,
    );
    expect(err.text()).toContain('published config v2');
    expect(err.text()).toContain('rolling out fraud rules v2');
    expect(err.text()).toContain('exactly once: OK');
    expect(out.text()).toContain('"dashboard":"http://127.0.0.1:');
  }, 240_000);
});

describe('the closing check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-verify-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const record = (id: string, seq: number) => ({
    workflow_id: id,
    workflow_type: 'pos_payment',
    sequence_number: seq,
  });

  async function deviceFile(
    name: string,
    rows: { id: string; seq: number; status: string }[],
  ): Promise<string> {
    const file = join(dir, `${name}.db`);
    const store = asEdge(await openStore(file));
    await ensureEdgeSchema(store);
    for (const r of rows)
      await store.edge
        .insertInto('saf_pending_transactions')
        .values({
          workflow_id: r.id,
          device_id: name,
          sequence_number: r.seq,
          idempotency_key: r.id,
          workflow_type: 'pos_payment',
          record: JSON.stringify(record(r.id, r.seq)),
          signature: 'sig',
          status: r.status,
        })
        .execute();
    await store.close();
    return file;
  }

  it('names missing, unexpected, duplicated and pending records', async () => {
    const ids = Array.from({ length: 5 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    const cloud = await openWithSchema(CLOUD_DIALECTS.at(-1)!);
    try {
      const dbFile = await deviceFile('pos-001', [
        { id: ids[0]!, seq: 1, status: 'SYNCED' },
        { id: ids[1]!, seq: 2, status: 'SYNCED' },
        { id: ids[2]!, seq: 3, status: 'PENDING' },
        { id: ids[3]!, seq: 4, status: 'REJECTED' },
      ]);
      await cloud.store.cloud
        .insertInto('edge_devices')
        .values({ device_id: 'pos-001', secret_ciphertext: 'x' })
        .execute();
      const cloudRow = (id: string, seq: number) => ({
        transaction_id: id,
        device_id: 'pos-001',
        device_sequence: seq,
        idempotency_key: id,
        workflow_type: 'pos_payment',
        record: JSON.stringify(record(id, seq)),
        signature: 'sig',
      });
      // ids[1] never arrived; ids[4] was never recorded by the device
      await cloud.store.cloud
        .insertInto('saf_transactions')
        .values([cloudRow(ids[0]!, 1), cloudRow(ids[4]!, 5)])
        .execute();
      const verdict = await verifyExactlyOnce(cloud.store, [{ deviceId: 'pos-001', dbFile }]);
      expect(verdict).toMatchObject({
        ok: false,
        deviceRecords: 4,
        cloudRecords: 2,
        pending: 1,
        rejected: 1,
        missing: [ids[1]],
        unexpected: [ids[4]],
        duplicated: [],
      });
    } finally {
      await cloud.close();
    }
  });
});
