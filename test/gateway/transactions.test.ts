/**
 * SAF intake over real HTTP: good, forged, other-device, clear-PAN, malformed, duplicate
 * (retried batch), idempotency- and sequence-conflicting records, gaps, envelope errors —
 * asserting exactly what is stored, and that a bad record never blocks a good one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTransactionRoutes } from '../../gateway/routes/transactions.js';
import { signTransactionRecord } from '../../runtime/index.js';
import { signedRecord, withoutRandomIds } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface BatchAnswer {
  synced_ids: string[];
  duplicates: string[];
  rejected: { id: string | null; index: number; code: string; message: string; errors?: Json[] }[];
  sequence_gaps?: { from: number; to: number }[];
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`SAF intake on ${dialect.name}`, () => {
    let gw: TestGateway;
    let secret: string;
    let otherSecret: string;
    const upload = (body: unknown, deviceId = 'pos-1', key = secret) =>
      gw.asDevice(deviceId, key, '/api/v1/transactions/batch', {
        method: 'POST',
        body: JSON.stringify(body),
      });
    const stored = async (deviceId = 'pos-1') =>
      gw.handle.store.cloud
        .selectFrom('saf_transactions')
        .selectAll()
        .where('device_id', '=', deviceId)
        .orderBy('device_sequence')
        .execute();
    const device = (deviceId = 'pos-1') =>
      gw.handle.store.cloud
        .selectFrom('edge_devices')
        .select(['status', 'last_sync', 'last_sequence_number', 'metadata'])
        .where('device_id', '=', deviceId)
        .executeTakeFirstOrThrow();

    beforeAll(async () => {
      gw = await startTestGateway(dialect, { routes: [registerTransactionRoutes] });
      secret = await gw.insertDevice('pos-1');
      otherSecret = await gw.insertDevice('pos-2');
    });
    afterAll(async () => {
      await gw.close();
    });

    const good1 = () => signedRecord('pos-1', secret, { device_sequence: 1 });
    let first: Json[];
    const records = (...items: unknown[]) => items;

    it('stores the good records of a mixed batch and rejects each bad one by itself', async () => {
      const forged = signedRecord('pos-1', 'not-the-secret', { device_sequence: 3 });
      const tampered = {
        ...signedRecord('pos-1', secret, { device_sequence: 4 }),
        amount_minor: 1,
      };
      const otherDevice = signedRecord('pos-2', otherSecret, { device_sequence: 5 });
      const claimsOther = signedRecord('pos-2', secret, { device_sequence: 6 });
      const clearPan = signedRecord('pos-1', secret, {
        device_sequence: 7,
        final_state: { receipt: 'card 4111 1111 1111 1111 approved' },
      });
      const panAsNumber = signedRecord('pos-1', secret, {
        device_sequence: 8,
        final_state: { pan: 5555555555554444 },
      });
      const malformed = signedRecord('pos-1', secret, {
        device_sequence: 0,
        currency: 'eur',
        extra: true,
      });
      const all = records(
        good1(),
        forged,
        signedRecord('pos-1', secret, {
          device_sequence: 2,
          card: undefined,
          amount_minor: undefined,
          currency: undefined,
        }),
        tampered,
        otherDevice,
        claimsOther,
        clearPan,
        panAsNumber,
        malformed,
        'not a record',
      );
      // `undefined` members are not part of the record the device signed
      all[2] = JSON.parse(JSON.stringify(all[2])) as Json;
      first = all.slice(0, 9) as Json[];
      const res = await upload({ records: all });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as BatchAnswer;
      expect(answer.synced_ids).toEqual([first[0]!.workflow_id, first[2]!.workflow_id]);
      expect(answer.duplicates).toEqual([]);
      expect(answer.rejected.map((r) => [r.index, r.code])).toEqual([
        [1, 'INVALID_SIGNATURE'],
        [3, 'INVALID_SIGNATURE'],
        [4, 'DEVICE_MISMATCH'],
        [5, 'DEVICE_MISMATCH'],
        [6, 'CARD_DATA_IN_CLEAR'],
        [7, 'CARD_DATA_IN_CLEAR'],
        [8, 'INVALID_RECORD'],
        [9, 'INVALID_RECORD'],
      ]);
      expect(answer.rejected[0]!.id).toBe(forged.workflow_id);
      const invalid = answer.rejected.find((r) => r.index === 8)!;
      expect(invalid.errors?.map((e) => e.path).sort()).toEqual([
        '$',
        '$.currency',
        '$.device_sequence',
      ]);
      // the card number is never echoed back
      expect(withoutRandomIds(JSON.stringify(answer))).not.toMatch(/4111|5555555555554444/);
      expect(answer.rejected[4]!.message).toContain('$.final_state.receipt');

      const rows = await stored();
      expect(rows.map((r) => r.idempotency_key)).toEqual([
        first[0]!.workflow_id,
        first[2]!.workflow_id,
      ]);
      const [row1, row2] = rows;
      expect(row1).toMatchObject({
        device_sequence: expect.anything() as unknown,
        workflow_type: 'payment_authorization',
        workflow_version: '1',
        currency: 'EUR',
        card_token: 'tok_8f2a',
        card_last4: '4242',
        encrypted_payload: (first[0]!.card as Json).encrypted_payload,
        signature: first[0]!.signature,
        status: 'ACCEPTED',
      });
      expect(Number(row1!.amount_minor)).toBe(1250);
      expect(new Date(row1!.offline_created_at as string).toISOString()).toBe(
        '2025-03-01T10:00:00.000Z',
      );
      const { signature: _signature, ...unsigned } = first[0]!;
      expect(row1!.record).toEqual(unsigned);
      expect(row2).toMatchObject({ card_token: null, amount_minor: null, currency: null });
      expect(await stored('pos-2')).toEqual([]);

      const after = await device();
      expect(Number(after.last_sequence_number)).toBe(2);
      expect(after.last_sync).not.toBeNull();
      // SYNCING during the upload, back to OFFLINE (no socket) through the device actor
      expect(after.status).toBe('OFFLINE');
      expect((after.metadata as { actor: unknown }).actor).toEqual({
        machine: 'device',
        value: 'offline',
        context: { session: null, syncs: 0 },
      });
    });

    it('answers a retried batch with the stored records as duplicates, storing nothing twice', async () => {
      const res = await upload({ records: [...first, 'not a record'] });
      const answer = (await res.json()) as BatchAnswer;
      const ids = [first[0]!.workflow_id, first[2]!.workflow_id];
      expect(answer.synced_ids).toEqual(ids);
      expect(answer.duplicates).toEqual(ids);
      expect(answer.rejected).toHaveLength(8);
      expect(await stored()).toHaveLength(2);
    });

    it('rejects reused ids and sequence numbers, and reports sequence gaps', async () => {
      const original = first[0]!;
      const changed: Json = { ...original, amount_minor: 999 };
      delete changed.signature;
      const sameIdOtherContent = { ...changed, signature: signTransactionRecord(secret, changed) };
      const sequenceTaken = signedRecord('pos-1', secret, { device_sequence: 2 });
      const sixth = signedRecord('pos-1', secret, { device_sequence: 6 });
      const otherDevicesId = signedRecord('pos-2', otherSecret, {
        workflow_id: original.workflow_id,
        device_sequence: 1,
      });
      const inBatchTwice = signedRecord('pos-1', secret, { device_sequence: 7 });
      const inBatchSequence = signedRecord('pos-1', secret, { device_sequence: 7 });
      const res = await upload({
        records: [
          sameIdOtherContent,
          sequenceTaken,
          sixth,
          inBatchTwice,
          inBatchTwice,
          inBatchSequence,
        ],
      });
      const answer = (await res.json()) as BatchAnswer;
      expect(answer.synced_ids).toEqual([sixth.workflow_id, inBatchTwice.workflow_id]);
      expect(answer.duplicates).toEqual([]);
      expect(answer.rejected.map((r) => [r.index, r.code])).toEqual([
        [0, 'IDEMPOTENCY_CONFLICT'],
        [1, 'SEQUENCE_CONFLICT'],
        [5, 'SEQUENCE_CONFLICT'],
      ]);
      expect(answer.sequence_gaps).toEqual([{ from: 3, to: 5 }]);
      expect(Number((await device()).last_sequence_number)).toBe(7);

      // another device may not claim a stored workflow id, even correctly signed (bare array body)
      const theirs = await upload([otherDevicesId], 'pos-2', otherSecret);
      const theirAnswer = (await theirs.json()) as BatchAnswer;
      expect(theirAnswer.rejected.map((r) => r.code)).toEqual(['IDEMPOTENCY_CONFLICT']);
      expect(theirAnswer.synced_ids).toEqual([]);

      const rows = await stored();
      expect(rows.map((r) => Number(r.device_sequence))).toEqual([1, 2, 6, 7]);
      expect(Number(rows[0]!.amount_minor)).toBe(1250);
      expect(await stored('pos-2')).toEqual([]);
    });

    it('documents the upload in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      expect(doc.paths['/api/v1/transactions/batch']).toHaveProperty('post');
    });

    it('refuses a malformed envelope with a 422 naming the paths, and non-devices', async () => {
      const notArray = await upload({ records: 'x' });
      expect(notArray.status).toBe(422);
      const problem = (await notArray.json()) as { code: string; errors: { path: string }[] };
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.errors[0]!.path).toBe('$.records');
      const tooMany = await upload({ records: Array.from({ length: 501 }, () => ({})) });
      expect(tooMany.status).toBe(422);
      expect(((await tooMany.json()) as { errors: { path: string }[] }).errors[0]!.path).toBe(
        '$.records',
      );
      expect((await upload({ records: [], more: 1 })).status).toBe(422);
      const operator = await gw.asUser(await gw.token('admin'), '/api/v1/transactions/batch', {
        method: 'POST',
        body: JSON.stringify({ records: [good1()] }),
      });
      expect(operator.status).toBe(403);
      const unsigned = await fetch(`${gw.url}/api/v1/transactions/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ records: [good1()] }),
      });
      expect(unsigned.status).toBe(401);
      expect(await stored()).toHaveLength(4);
    });
  });
}
