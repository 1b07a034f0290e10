/**
 * SAF records: the signature (canonical, so key order and whitespace never matter; any
 * change breaks it; the previous secret works during a rotation), the record schema, and
 * the clear-PAN check (known card numbers in every shape found, common look-alikes not).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  containsClearPan,
  findClearPan,
  luhnValid,
  safRecordSchema,
  signTransactionRecord,
  verifyTransactionRecord,
} from '../../runtime/index.js';
import { signedRecord } from '../support/device.js';

const json = fc.jsonValue({ maxDepth: 3 });

/** The same object with its keys in reverse order, recursively. */
function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reorder(v)]),
    );
  return value;
}

describe('transaction record signatures', () => {
  it('verify whatever the key order, and fail on any changed member', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), json, { minKeys: 1 }), (record) => {
        const signed = { ...record, signature: signTransactionRecord('s3cret', record) };
        expect(
          verifyTransactionRecord(['s3cret'], reorder(signed) as Record<string, unknown>),
        ).toBe(true);
        expect(verifyTransactionRecord(['other'], signed)).toBe(false);
        const key = Object.keys(record)[0]!;
        const changed = { ...signed, [key]: { changed: record[key] ?? null } };
        expect(verifyTransactionRecord(['s3cret'], changed)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('accept any of the candidate secrets (rotation) and refuse a missing signature', () => {
    const record = signedRecord('pos-1', 'old-secret');
    expect(verifyTransactionRecord(['new-secret', 'old-secret'], record)).toBe(true);
    expect(verifyTransactionRecord([], record)).toBe(false);
    const { signature: _signature, ...unsigned } = record;
    expect(verifyTransactionRecord(['old-secret'], unsigned)).toBe(false);
  });
});

describe('transaction record schema', () => {
  it('accepts a complete record and names each bad field by path', () => {
    expect(safRecordSchema.safeParse(signedRecord('pos-1', 'k')).success).toBe(true);
    const bad = safRecordSchema.safeParse(
      signedRecord('pos-1', 'k', {
        workflow_id: 'w-1',
        device_sequence: 1.5,
        currency: undefined,
        card: { token: 't', last4: '42', encrypted_payload: 'not base64!' },
        created_at: '2025-03-01 10:00',
      }),
    );
    expect(bad.success).toBe(false);
    expect([...new Set(bad.error!.issues.map((i) => i.path.join('.')))].sort()).toEqual([
      'card.encrypted_payload',
      'card.last4',
      'created_at',
      'device_sequence',
      'workflow_id',
    ]);
    const noCurrency = safRecordSchema.safeParse(
      signedRecord('pos-1', 'k', { currency: undefined }),
    );
    expect(noCurrency.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['currency', 'an amount needs a currency'],
    ]);
  });
});

describe('clear PAN detection', () => {
  const PANS = [
    '4111111111111111',
    '5555555555554444',
    '378282246310005',
    '6011111111111117',
    '4000056655665556',
  ];

  it('finds card numbers as digits, printed groups, numbers and keys', () => {
    for (const pan of PANS) {
      expect(containsClearPan(pan)).toBe(true);
      expect(containsClearPan(`card:${pan};`)).toBe(true);
    }
    expect(containsClearPan('pay 4111 1111 1111 1111 now')).toBe(true);
    expect(containsClearPan('4111-1111-1111-1111')).toBe(true);
    expect(containsClearPan('3782 822463 10005')).toBe(true);
    expect(findClearPan({ a: [{ b: 5555555555554444 }] })).toEqual({
      path: '$.a[0].b',
      inKey: false,
    });
    expect(findClearPan({ x: { '4111111111111111': true } })).toEqual({ path: '$.x', inKey: true });
    expect(findClearPan({ ok: [1, 'short 123'], 'odd key': ['card 4111 1111 1111 1111'] })).toEqual(
      { path: '$["odd key"][0]', inKey: false },
    );
    // beyond 2^53 a 16–19 digit integer cannot be checked: it counts
    expect(findClearPan({ n: Number('4111111111111111111') })).toBeDefined();
  });

  it('leaves alone what only resembles one', () => {
    for (const text of [
      '4111111111111112', // fails Luhn
      '411111111111', // 12 digits
      '12345678-1234-1234-1234-123456789012', // UUID
      '2025-03-01T10:00:02.500Z',
      '+1 555-123-4567',
      'tok_4111',
    ])
      expect(containsClearPan(text)).toBe(false);
    expect(findClearPan(signedRecord('pos-1', 'k'))).toBeUndefined();
  });

  it('never takes a UUID for one (records carry UUIDs; their groups can line up like a card)', () => {
    // all-digit middle groups that pass Luhn as a printed card would
    for (const id of [
      'aace5705-3888-4162-9963-51b78820ecea',
      '80769ddb-6626-4905-9360-16720bc53129',
    ])
      expect(findClearPan({ workflow_id: id, note: `order ${id}.` })).toBeUndefined();
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        expect(containsClearPan(id)).toBe(false);
        expect(containsClearPan(id.toUpperCase())).toBe(false);
      }),
      { numRuns: 20_000 },
    );
    // a card next to a UUID is still found
    expect(containsClearPan('aace5705-3888-4162-9963-51b78820ecea 4111 1111 1111 1111')).toBe(true);
  });

  it('never takes a hex digest for one (ETags and hashes can hold a Luhn-valid run of digits)', () => {
    // a SHA-256 hex digest whose run of 16 digits passes Luhn
    const digest = `ab${'4111111111111111'}${'c0ffee'.repeat(7)}d4`;
    expect(digest).toHaveLength(62);
    expect(containsClearPan('4111111111111111')).toBe(true);
    expect(findClearPan({ documents: [{ etag: `"${digest}"` }] })).toBeUndefined();
    expect(containsClearPan(`sha256:${digest.toUpperCase()}`)).toBe(false);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{64}$/), (hex) => {
        expect(containsClearPan(`"${hex}"`)).toBe(false);
      }),
      { numRuns: 20_000 },
    );
    // a card next to a digest is still found, and so is one in a short hex-looking word
    expect(containsClearPan(`${digest} 4111 1111 1111 1111`)).toBe(true);
    expect(containsClearPan('ab4111111111111111cd')).toBe(true);
  });

  it('agrees with Luhn on every 13–19 digit string', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{13,19}$/), (digits) => {
        expect(containsClearPan(`x${digits}x`)).toBe(luhnValid(digits));
      }),
    );
  });
});
