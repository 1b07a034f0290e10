/**
 * The terminal's card-number masking and its store write hook, over a real SQLite file: a
 * masked value keeps its shape and the last four digits and holds nothing the card detector
 * calls a card number; a value without one is left exactly as it was; writes are masked
 * whichever statement binds the text, reads are not, and signed documents are left alone.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { maskCardWrites } from '../../edge/cardData/maskCardWrites.js';
import {
  maskCardData,
  maskCardNumbers,
  maskStoredText,
} from '../../edge/cardData/maskCardNumbers.js';
import { prepareDatabaseFiles } from '../../edge/cardData/privateFiles.js';
import { refuseCardState } from '../../edge/cardData/refuseCardState.js';
import {
  containsClearPan,
  ensureEdgeSchema,
  findClearPan,
  openStore,
  asEdge,
} from '../../runtime/index.js';

describe('masking card numbers', () => {
  it('keeps the last four digits of each printed form and nothing else of the number', () => {
    for (const [text, masked] of [
      ['card 4111111111111111 declined', 'card ************1111 declined'],
      ['card 4111 1111 1111 1111 declined', 'card **** **** **** 1111 declined'],
      ['card 3782-822463-10005', 'card ****-******-*0005'],
    ] as const) {
      expect(maskCardNumbers(text)).toBe(masked);
      expect(containsClearPan(maskCardNumbers(text))).toBe(false);
    }
  });

  it('leaves a text or value without a card number as it was', () => {
    const text = 'amount 1250 EUR at 2026-11-29T05:00:00.000Z, order 12345678';
    expect(maskCardNumbers(text)).toBe(text);
    expect(maskStoredText(text)).toBe(text);
    const value = { amount_minor: 1250, id: '0192a4e5-8f1b-7c3d-9e2f-123456789abc' };
    expect(maskCardData(value)).toBe(value);
  });

  it('masks a JSON document member by member, keys and numbers included', () => {
    const stored = JSON.stringify({
      a: { pan: '4111-1111-1111-1111', n: 4111111111111111, amount: 1250 },
      '5500000000000004': true,
      list: ['ok', 'card 6011111111111117'],
    });
    const masked = maskStoredText(stored);
    const parsed = JSON.parse(masked) as Record<string, unknown>;
    expect(parsed).toEqual({
      a: { pan: '****-****-****-1111', n: '************1111', amount: 1250 },
      '************0004': true,
      list: ['ok', 'card ************1117'],
    });
    expect(findClearPan(parsed)).toBeUndefined();
    expect(containsClearPan(masked)).toBe(false);
  });

  it('masks long documents written again and again, each time they hold a card number', () => {
    // long enough to be remembered once found clean, with arrays so each needs the full scan
    const steps = Array.from({ length: 40 }, (_, i) => ({ name: `step_${i}`, at: [i, i + 1] }));
    const clean = JSON.stringify({ steps, ref: '4111 1111' });
    const leaky = JSON.stringify({ steps, ref: '4111 1111 1111 1111' });
    expect(clean.length).toBeGreaterThan(512);
    for (let round = 0; round < 3; round++) {
      expect(maskStoredText(clean)).toBe(clean);
      const masked = maskStoredText(leaky);
      expect(masked).not.toBe(leaky);
      expect(JSON.parse(masked)).toEqual({ steps, ref: '**** **** **** 1111' });
    }
    // and a text the shape test spares is left alone without being parsed
    const plain = JSON.stringify({ id: '01a22734-0e53-724e-9845-b02596b7e7e5', amount: 1250 });
    expect(maskStoredText(plain)).toBe(plain);
  });

  it('refuses a state holding a card number, naming only its path', () => {
    expect(refuseCardState({ card: { token: 'tok_1', last4: '1111' } }, 'read')).toBeUndefined();
    const refused = refuseCardState({ receipt: { pan: '4111 1111 1111 1111' } }, 'read');
    expect(refused).toMatchObject({ code: 'CARD_DATA_IN_STATE', retryable: false });
    expect(refused?.message).toContain('state.receipt.pan');
    expect(containsClearPan(refused?.message ?? '')).toBe(false);
  });
});

describe('the edge store write hook', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-card-writes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('masks what is written, not what is looked up, and leaves signed documents alone', async () => {
    const file = join(dir, 'new', 'edge.db');
    prepareDatabaseFiles(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const store = asEdge(await openStore(file, { sqlite: { rewriteWrites: maskCardWrites } }));
    try {
      await ensureEdgeSchema(store);
      const pan = '4111111111111111';
      await store.edge
        .insertInto('edge_sync_state')
        .values({ key: 'note', value: `card ${pan}`, updated_at: new Date().toISOString() })
        .execute();
      await sql`INSERT INTO edge_sync_state (key, value, updated_at) VALUES (${'raw'}, ${JSON.stringify({ pan })}, ${'2026-01-01T00:00:00Z'})`.execute(
        store.db,
      );
      await store.edge
        .insertInto('edge_workflow_cache')
        .values({
          workflow_type: 'signed',
          yaml: `limit: ${pan}`,
          definition_hash: 'h',
          updated_at: new Date().toISOString(),
        })
        .execute();
      const rows = await store.edge
        .selectFrom('edge_sync_state')
        .selectAll()
        .where('key', 'in', ['note', 'raw'])
        .execute();
      expect(Object.fromEntries(rows.map((r) => [r.key, r.value]))).toEqual({
        note: 'card ************1111',
        raw: JSON.stringify({ pan: '************1111' }),
      });
      // a read binds the value as given: the masked row is not found by the clear one
      const lookup = await store.edge
        .selectFrom('edge_sync_state')
        .select('key')
        .where('value', '=', `card ${pan}`)
        .execute();
      expect(lookup).toEqual([]);
      const cached = await store.edge.selectFrom('edge_workflow_cache').select('yaml').execute();
      expect(cached).toEqual([{ yaml: `limit: ${pan}` }]);
      // SQLite gives the log and its index the database file's mode (both go on close)
      for (const suffix of ['-wal', '-shm'])
        expect(statSync(`${file}${suffix}`).mode & 0o777).toBe(0o600);
    } finally {
      await store.close();
    }
  });
});
