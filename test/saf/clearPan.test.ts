/**
 * The card detector's reading of a card number: every printed form (any short separator,
 * digits of any script, groups split across the strings of an array) is found, generated
 * from Luhn-completed numbers of every length; and the look-alikes records carry every day
 * (hex digests, UUIDs, RFC 3339 times, dates, amounts, sentences with numbers, short lists
 * of numbers) are never taken for one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containsClearPan, findClearPan, luhnValid } from '../../runtime/index.js';
import { jsonTextMayHoldPan, mayHoldPan, scanForPan } from '../../runtime/saf/clearPan.js';
import { hasDigits, toAsciiDigits } from '../../runtime/saf/asciiDigits.js';

/** `body` completed with its Luhn check digit. */
function luhnComplete(body: string): string {
  for (let check = 0; check <= 9; check++)
    if (luhnValid(`${body}${check}`)) return `${body}${check}`;
  throw new Error('unreachable: one check digit always fits');
}

/** A card number: 13 to 19 digits that pass Luhn. */
const pan = fc
  .array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 18 })
  .map((body) => luhnComplete(body.join('')));

/** Sizes of the printed groups of a `length`-digit number: four, then groups of three to six. */
function groupSizes(length: number, choices: readonly number[]): number[] {
  const sizes = [4];
  let left = length - 4;
  for (let k = 0; left > 0; k++) {
    const fits = [3, 4, 5, 6].filter((g) => g === left || (g < left && left - g >= 3));
    const size = fits[(choices[k % choices.length] ?? 0) % fits.length]!;
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

/** Zero of each digit form a card number may be written in. */
const DIGIT_ZEROS = [
  0x30, // ASCII
  0xff10, // full-width
  0x0660, // Arabic-Indic
  0x06f0, // extended Arabic-Indic
  0x0966, // Devanagari
  0x09e6, // Bengali
  0x0e50, // Thai
  0x1d7ce, // mathematical bold
  0x1d7f6, // mathematical monospace
];
/** Digit forms, one per digit of a number (mixed scripts are fine). */
const scripts = fc.array(fc.constantFrom(...DIGIT_ZEROS), { minLength: 19, maxLength: 19 });
const render = (digits: string, zeros: readonly number[]) =>
  [...digits].map((d, i) => String.fromCodePoint(zeros[i]! + Number(d))).join('');

/** A separator between printed groups: one to three characters, neither letters nor digits. */
const separator = fc
  .array(fc.constantFrom(' ', '-', '.', '/', '_', '\t', '\u00a0', '\u3000', ':', '|', '*', '–'), {
    minLength: 1,
    maxLength: 3,
  })
  .map((chars) => chars.join(''));

/** A card number printed in groups: the groups and the separators between them. */
const printed = fc
  .record({
    digits: pan,
    choices: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
    separators: fc.array(separator, { minLength: 5, maxLength: 5 }),
    zeros: scripts,
  })
  .map(({ digits, choices, separators, zeros }) => {
    const groups: string[] = [];
    let at = 0;
    for (const size of groupSizes(digits.length, choices)) {
      groups.push(render(digits.slice(at, at + size), zeros.slice(at)));
      at += size;
    }
    return { digits, groups, separators };
  });

const joinGroups = (groups: readonly string[], separators: readonly string[]) =>
  groups.map((g, i) => (i === 0 ? g : `${separators[i - 1]}${g}`)).join('');

const before = fc.constantFrom('', 'card ', 'PAN: ', 'paid with ', '#', '(', 'カード ');
const after = fc.constantFrom('', ' approved', ';', ')', '.', ' — thanks');

describe('digits of every script', () => {
  it('reads each decimal digit as its ASCII digit', () => {
    for (const zero of DIGIT_ZEROS)
      expect(toAsciiDigits(render('0123456789', Array<number>(10).fill(zero)))).toBe('0123456789');
    const unread: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      const char = String.fromCodePoint(cp);
      if (/^\p{Nd}$/u.test(char) && !/^[0-9]$/.test(toAsciiDigits(char)))
        unread.push(cp.toString(16));
    }
    expect(unread).toEqual([]);
  });

  it('never skips a text whose characters stand for enough digits (the cheap check)', () => {
    const missed: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      const digits = toAsciiDigits(char).replace(/[^0-9]/g, '').length;
      if (digits > 0 && !hasDigits(char.repeat(Math.ceil(13 / digits)), 13))
        missed.push(cp.toString(16));
    }
    expect(missed).toEqual([]);
    expect(hasDigits('４１１１ １１１１ １１１', 13)).toBe(false);
    expect(hasDigits('４１１１ １１１１ １１１１ １', 13)).toBe(true);
    expect(hasDigits('⑳⑳⑳⑳⑳⑳⑳', 13)).toBe(true);
    expect(hasDigits('café crème à 12 h 30, merci — à bientôt', 13)).toBe(false);
  });
});

describe('the shape test before the scan', () => {
  /** Texts near the edges of the rule: digits, separators, letters, UUIDs and digests mixed. */
  const piece = fc.oneof(
    fc.stringMatching(/^[0-9]{1,20}$/),
    pan,
    fc.constantFrom(' ', '-', '.', '/', '_', '\t', ':', ',', '","', '", "', '  ', '    ', '\u00a0'),
    fc.constantFrom('a', 'f', 'x', 'é', 'カ', 'Z'),
    fc.uuid(),
    fc.stringMatching(/^[0-9a-f]{32,64}$/),
    fc.stringMatching(/^[0-9a-f-]{1,12}$/),
  );
  const text = fc.array(piece, { maxLength: 14 }).map((pieces) => pieces.join(''));

  it('never spares a text the scan would flag', () => {
    fc.assert(
      fc.property(text, (t) => {
        if (scanForPan(t)) expect([t, mayHoldPan(t)]).toEqual([t, true]);
      }),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(printed, before, after, ({ groups, separators }, head, tail) => {
        const t = toAsciiDigits(`${head}${joinGroups(groups, separators)}${tail}`);
        expect([t, mayHoldPan(t)]).toEqual([t, true]);
      }),
      { numRuns: 1_500 },
    );
  });

  it('never spares a JSON text whose document the detector would flag', () => {
    const leaf = fc.oneof(
      text,
      pan,
      printed.map(({ groups, separators }) => joinGroups(groups, separators)),
      fc.integer(),
      fc.constantFrom(4111111111111111, 1e15 + 3, 1e12, 999999999999.9999, 2 ** 60, -4e15),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const doc = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), tie('array')),
      object: fc.dictionary(fc.oneof(fc.string(), text), tie('value'), { maxKeys: 5 }),
      array: fc.array(tie('value'), { maxLength: 5 }),
    })).value;
    fc.assert(
      fc.property(doc, fc.constantFrom(undefined, 1, '\t'), (value, indent) => {
        const t = JSON.stringify(value, null, indent);
        if (t === undefined) return;
        const flagged = containsClearPan(t) || findClearPan(JSON.parse(t)) !== undefined;
        if (flagged) expect([t, jsonTextMayHoldPan(t)]).toEqual([t, true]);
      }),
      { numRuns: 10_000 },
    );
    // what each condition keeps out: arrays, escapes, other scripts, exponents
    const short = luhnComplete('411111111111'); // 13 digits: printed 4 + 6 + 3
    const exponent = Array.from({ length: 90 }, (_, i) => `${(10 + i) / 10}e15`).find((e) =>
      luhnValid(String(Number(e))),
    )!;
    for (const t of [
      `{"p":["${short.slice(0, 4)} ","${short.slice(4, 10)} ","${short.slice(10)}"]}`,
      '{"p":"4111\\n1111\\n1111\\n1111"}',
      '{"p":"４１１１１１１１１１１１１１１１"}',
      `{"p":${exponent}}`,
    ]) {
      expect([t, containsClearPan(t) || findClearPan(JSON.parse(t)) !== undefined]).toEqual([
        t,
        true,
      ]);
      expect([t, jsonTextMayHoldPan(t)]).toEqual([t, true]);
      expect([t, mayHoldPan(t)]).toEqual([t, false]);
    }
    const state = JSON.stringify({
      id: '01a22733-3231-71c9-97e4-b7cd577c11dc', // UUIDv7: digits, a dash, digits
      hash: 'b4432eeda49d1bbd7dcab125ded1a552d5dfc4f78aa0d1d32eb6ca4752bda74d',
      amount_minor: 4999,
      card: { token: 'tok_4111', last4: '1111' },
      at: '2026-11-29T12:00:00.000Z',
      edge: { online: false },
    });
    for (const t of [
      state,
      '01a22734-0e53-724e-9845-b02596b7e7e5',
      'b4432eeda49d1bbd7dcab125ded1a552d5dfc4f78aa0d1d32eb6ca4752bda74d',
      '{"value":"completed","context":{"saga":[],"attempt":0,"retryAt":null}}',
    ])
      expect([t, jsonTextMayHoldPan(t)]).toEqual([t, false]);
    for (const t of ['{"a":-1.5e15}', '{"a":[1,2e14]}', '{"a":15E+14,"b":1}'])
      expect([t, jsonTextMayHoldPan(t)]).toEqual([t, true]);
  });

  it('spares the look-alikes every stored row carries', () => {
    for (const t of [
      '2026-11-29T12:00:00.000Z',
      '{"amount_minor":4999,"currency":"EUR","card":{"token":"tok_1234567","last4":"4242"}}',
      '0195a3c2-7b1e-7cc0-9f00-3e1d2c4b5a69',
      'payment 12 of 1234 approved at 10:45',
    ])
      expect([t, mayHoldPan(t)]).toEqual([t, false]);
    for (const t of ['4111111111111', '4111 111', '4111-1111-1111-1111', '1234,567'])
      expect([t, mayHoldPan(t)]).toEqual([t, true]);
  });
});

describe('card numbers are found in every printed form', () => {
  it('finds each form the detector once missed', () => {
    for (const text of [
      '4111.1111.1111.1111',
      '4111/1111/1111/1111',
      '4111_1111_1111_1111',
      '4111\t1111\t1111\t1111',
      '4111  1111  1111  1111',
      '4111.1111-1111 1111',
      '3782 - 822463 / 10005',
      '6011\n1111\n1111\n1117',
      '４１１１１１１１１１１１１１１１',
      '４１１１　１１１１　１１１１　１１１１',
      '٥٥٥٥٥٥٥٥٥٥٥٥٤٤٤٤',
      '𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏',
    ])
      expect([text, containsClearPan(text)]).toEqual([text, true]);
    for (const parts of [
      ['4111', '1111', '1111', '1111'],
      ['4111 1111', '1111 1111'],
      ['４１１１', '１１１１', '１１１１', '１１１１'],
      ['3782', '822463', '10005'],
    ])
      expect(findClearPan({ ok: 1, parts })).toEqual({ path: '$.parts', inKey: false });
    // reached through objects inside arrays, the way the walker reaches any value
    expect(findClearPan({ lines: [{ n: 1 }, { pan: ['5555', '5555', '5555', '4444'] }] })).toEqual({
      path: '$.lines[1].pan',
      inKey: false,
    });
    // numbers, keys and the 2^53 rule as before
    expect(findClearPan({ a: [5555555555554444] })).toEqual({ path: '$.a[0]', inKey: false });
    expect(findClearPan({ x: { '４１１１ １１１１ １１１１ １１１１': 1 } })).toEqual({
      path: '$.x',
      inKey: true,
    });
    expect(findClearPan({ n: Number('4111111111111111111') })).toBeDefined();
  });

  it('keeps to its rule: long gaps, letters and numbers end a printed number', () => {
    for (const text of [
      '4111    1111    1111    1111', // four characters between groups
      '4111 a 1111 b 1111 c 1111',
      '4111x1111x1111x1111',
      '4111 11 11 1111 1111', // a two-digit group
    ])
      expect([text, containsClearPan(text)]).toEqual([text, false]);
    // only strings without letters are joined, and anything else ends the join
    expect(findClearPan({ parts: ['4111', 1111, '1111', '1111'] })).toBeUndefined();
    expect(findClearPan({ parts: [4111, 1111, 1111, 1111] })).toBeUndefined();
    expect(findClearPan({ parts: ['card 4111', '1111', '1111', 'x1111'] })).toBeUndefined();
  });

  it('finds any card number printed with any short separators and digits of any script', () => {
    fc.assert(
      fc.property(printed, before, after, ({ groups, separators }, head, tail) => {
        expect(containsClearPan(`${head}${joinGroups(groups, separators)}${tail}`)).toBe(true);
      }),
      { numRuns: 1_500 },
    );
  });

  it('finds any card number as one run of digits of any script', () => {
    fc.assert(
      fc.property(pan, scripts, before, after, (digits, zeros, head, tail) => {
        expect(containsClearPan(`${head}${render(digits, zeros)}${tail}`)).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('finds any card number split across adjacent strings of an array, at the array', () => {
    fc.assert(
      fc.property(
        printed,
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        ({ groups, separators }, cuts) => {
          // two or more strings, each holding whole groups
          const ends = [...new Set(cuts.map((c) => 1 + (c % (groups.length - 1))))].sort(
            (a, b) => a - b,
          );
          const parts = [0, ...ends].map((start, i) =>
            joinGroups(groups.slice(start, ends[i] ?? groups.length), separators.slice(start)),
          );
          const hit = findClearPan({ lines: [{ parts: ['ref A1', ...parts, 42] }] });
          // the array, or one of its strings when a part alone already passes as a card
          expect(hit?.path).toMatch(/^\$\.lines\[0\]\.parts(\[\d+\])?$/);
          expect(hit?.inKey).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

/** A number of `max` digits at most, as text. */
const digitsUpTo = (max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: max }).map((d) => d.join(''));
const hexDigest = fc
  .stringMatching(/^[0-9a-f]{64}$/)
  .chain((hex) => fc.constantFrom(hex, hex.toUpperCase()));
const timestamp = fc
  .record({
    at: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') }),
    t: fc.constantFrom('T', ' ', 't'),
    fraction: fc.constantFrom('', '.5', '.500', '.123456'),
    zone: fc.constantFrom('Z', '+01:00', '-05:30', '+14:00'),
  })
  .filter(({ at }) => !Number.isNaN(at.getTime()))
  .map(
    ({ at, t, fraction, zone }) =>
      `${at.toISOString().slice(0, 10)}${t}${at.toISOString().slice(11, 19)}${fraction}${zone}`,
  );
const isoDate = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') })
  .filter((at) => !Number.isNaN(at.getTime()))
  .chain((at) => {
    const day = at.toISOString().slice(0, 10);
    return fc.constantFrom(day, day.replaceAll('-', ''), day.slice(0, 7), `${day}/${day}`);
  });
const amount = fc
  .record({
    major: fc.integer({ min: 0, max: 999_999_999 }),
    minor: fc.integer({ min: 0, max: 99 }),
  })
  .chain(({ major, minor }) => {
    const cents = String(minor).padStart(2, '0');
    return fc.constantFrom(
      `${major}.${cents}`,
      `${major},${cents}`,
      `${major.toLocaleString('en-GB')}.${cents}`,
      `€${major}.${cents}`,
      `-${major}.${cents}`,
    );
  });
/** Words, and numbers of up to twelve digits each followed by a word. */
const sentence = fc
  .array(
    fc.tuple(
      fc.stringMatching(/^[A-Za-z]{1,10}$/),
      fc.option(fc.oneof(digitsUpTo(12), amount), { nil: undefined }),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((pairs) => pairs.flatMap(([word, n]) => (n === undefined ? [word] : [n, word])).join(' '));
const listSeparator = fc.constantFrom(' ', ', ', '; ', ' / ', '\t', ' | ');
const listOf = (item: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.array(item, { minLength: 1, maxLength: 8 }), listSeparator)
    .map(([items, sep]) => items.join(sep));

describe('look-alikes are never taken for a card number', () => {
  const never = (text: string): void => {
    expect([text, containsClearPan(text)]).toEqual([text, false]);
  };

  it('hex digests, alone, quoted, prefixed or listed', () => {
    fc.assert(
      fc.property(listOf(hexDigest), fc.constantFrom('', '"', 'sha256:', 'etag '), (list, head) =>
        never(`${head}${list}`),
      ),
      { numRuns: 5_000 },
    );
  });

  it('UUIDs, alone, listed, or as the strings of an array', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uuid(), { minLength: 1, maxLength: 6 }),
        listSeparator,
        (ids, sep) => {
          never(ids.join(sep));
          never(ids.join(sep).toUpperCase());
          expect(findClearPan({ ids })).toBeUndefined();
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('RFC 3339 timestamps and ISO dates, alone, listed, or in arrays', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(timestamp, isoDate), { minLength: 1, maxLength: 6 }),
        listSeparator,
        (times, sep) => {
          never(times.join(sep));
          expect(findClearPan({ times })).toBeUndefined();
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('amounts, alone, listed, or in arrays as strings or numbers', () => {
    fc.assert(
      fc.property(
        fc.array(amount, { minLength: 1, maxLength: 8 }),
        listSeparator,
        (amounts, sep) => {
          never(amounts.join(sep));
          expect(findClearPan({ amounts })).toBeUndefined();
          expect(
            findClearPan({ amounts: amounts.map((a) => Number(a.replace(/[^0-9.-]/g, ''))) }),
          ).toBeUndefined();
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('sentences with a few numbers', () => {
    fc.assert(fc.property(sentence, never), { numRuns: 3_000 });
  });

  it('short lists of numbers: small integers as numbers or strings, any integers as numbers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 2, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 999_999_999_999 }), { minLength: 2, maxLength: 30 }),
        (small, large) => {
          expect(findClearPan({ small })).toBeUndefined();
          expect(findClearPan({ small: small.map(String) })).toBeUndefined();
          expect(findClearPan({ large })).toBeUndefined();
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('a record holding all of them at once', () => {
    fc.assert(
      fc.property(
        fc.uuid(),
        hexDigest,
        timestamp,
        amount,
        sentence,
        (id, digest, at, total, note) => {
          expect(
            findClearPan({
              workflow_id: id,
              etag: `"${digest}"`,
              at,
              total,
              note,
              lines: [total, at, id],
            }),
          ).toBeUndefined();
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
