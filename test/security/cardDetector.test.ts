/**
 * The card detector against a real gateway: signed transaction records that carry a card
 * number in the forms a printed or split card takes — dots, slashes, underscores, tabs,
 * double spaces, mixed separators, full-width and other Unicode digits, an array of strings
 * — were once accepted and stored in clear. Each must now be refused as
 * `CARD_DATA_IN_CLEAR`, never echoed back, and never reach `saf_transactions`; a clean
 * record in the same batch is still stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTransactionRoutes } from '../../gateway/routes/transactions.js';
import { signedRecord, withoutRandomIds } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

interface BatchAnswer {
  synced_ids: string[];
  rejected: { id: string | null; index: number; code: string; message: string }[];
}

const fullWidth = (digits: string) =>
  [...digits].map((d) => String.fromCharCode(0xff10 + Number(d))).join('');
const arabicIndic = (digits: string) =>
  [...digits].map((d) => String.fromCharCode(0x0660 + Number(d))).join('');

/** Each form of a leaked card number, with where in the record the detector must point. */
const FORMS: { name: string; final_state: Record<string, unknown>; path: string }[] = [
  {
    name: 'dots',
    final_state: { receipt: 'card 4111.1111.1111.1111' },
    path: '$.final_state.receipt',
  },
  {
    name: 'slashes',
    final_state: { receipt: '4111/1111/1111/1111' },
    path: '$.final_state.receipt',
  },
  { name: 'underscores', final_state: { ref: '5555_5555_5555_4444' }, path: '$.final_state.ref' },
  { name: 'tabs', final_state: { line: '4111\t1111\t1111\t1111' }, path: '$.final_state.line' },
  {
    name: 'double spaces',
    final_state: { line: '4111  1111  1111  1111' },
    path: '$.final_state.line',
  },
  {
    name: 'mixed separators',
    final_state: { line: '3782 - 822463 / 10005' },
    path: '$.final_state.line',
  },
  {
    name: 'full-width digits',
    final_state: { note: `カード ${fullWidth('4111111111111111')}` },
    path: '$.final_state.note',
  },
  {
    name: 'full-width groups',
    final_state: {
      note: `${fullWidth('4111')}\u3000${fullWidth('1111')}\u3000${fullWidth('1111')}\u3000${fullWidth('1111')}`,
    },
    path: '$.final_state.note',
  },
  {
    name: 'Arabic-Indic digits',
    final_state: { note: arabicIndic('5555555555554444') },
    path: '$.final_state.note',
  },
  {
    name: 'an array of groups',
    final_state: { pan: ['4111', '1111', '1111', '1111'] },
    path: '$.final_state.pan',
  },
  {
    name: 'an array of halves',
    final_state: { pan: ['4111 1111', '1111 1111'] },
    path: '$.final_state.pan',
  },
  {
    name: 'an array inside objects in an array',
    final_state: { lines: [{ parts: ['6011', '1111', '1111', '1117'] }] },
    path: '$.final_state.lines[0].parts',
  },
];

for (const dialect of CLOUD_DIALECTS) {
  describe(`card numbers in uploaded records on ${dialect.name}`, () => {
    let gw: TestGateway;
    let secret: string;

    beforeAll(async () => {
      gw = await startTestGateway(dialect, { routes: [registerTransactionRoutes] });
      secret = await gw.insertDevice('pan-pos');
    });
    afterAll(async () => {
      await gw.close();
    });

    it('refuses every form of a card number and stores none of them', async () => {
      const clean = signedRecord('pan-pos', secret, {
        device_sequence: 1,
        final_state: { approved: true, at: '2025-03-01 10:00:02.500+01:00', total: '1234.56' },
      });
      const leaking = FORMS.map((form, i) =>
        signedRecord('pan-pos', secret, { device_sequence: i + 2, final_state: form.final_state }),
      );
      const res = await gw.asDevice('pan-pos', secret, '/api/v1/transactions/batch', {
        method: 'POST',
        body: JSON.stringify({ records: [clean, ...leaking] }),
      });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as BatchAnswer;

      expect(answer.synced_ids).toEqual([clean.workflow_id]);
      expect(
        answer.rejected.map((r) => ({ form: FORMS[r.index - 1]?.name, code: r.code })),
      ).toEqual(FORMS.map((form) => ({ form: form.name, code: 'CARD_DATA_IN_CLEAR' })));
      FORMS.forEach((form, i) =>
        expect(answer.rejected[i]!.message).toContain(`(at ${form.path})`),
      );
      // the number is never echoed back, in any of its forms
      expect(withoutRandomIds(JSON.stringify(answer))).not.toMatch(/4111|5555|6011|3782|１１１|٤/);

      const rows = await gw.handle.store.cloud
        .selectFrom('saf_transactions')
        .select(['idempotency_key', 'record'])
        .where('device_id', '=', 'pan-pos')
        .execute();
      expect(rows.map((r) => r.idempotency_key)).toEqual([clean.workflow_id]);
      expect(withoutRandomIds(JSON.stringify(rows))).not.toMatch(/4111|5555|6011|3782|１１１|٤/);
    });
  });
}
