import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPathSegment } from '../../runtime/expression/index.js';
import { renderTemplate } from '../../runtime/template/index.js';

describe('property: a single reference keeps its JSON value and type', () => {
  it('for arbitrary JSON values under arbitrary keys', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.jsonValue(),
        fc.constantFrom('', ' ', '  '),
        (key, value, pad) => {
          const template = `{{${pad}state${formatPathSegment(key)}${pad}}}`;
          const rendered = renderTemplate(template, { state: { [key]: value } });
          expect(rendered).toEqual(value);
          expect(Array.isArray(rendered)).toBe(Array.isArray(value));
          expect(typeof rendered).toBe(typeof value);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('inside arrays and objects too', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const rendered = renderTemplate(
          { a: ['{{ v }}', { b: '{{ state.v }}' }] },
          { state: { v: value } },
        );
        expect(rendered).toEqual({ a: [value, { b: value }] });
      }),
    );
  });
});

describe('property: text without templates renders to itself', () => {
  const noTemplate = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('{{'));

  it('for strings', () => {
    fc.assert(
      fc.property(noTemplate, (text) => {
        expect(renderTemplate(text, { state: {} })).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('for JSON documents, which are not mutated', () => {
    const document = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('{{'));
    fc.assert(
      fc.property(document, (value) => {
        const before = JSON.stringify(value);
        expect(renderTemplate(value, { state: {} })).toEqual(value);
        expect(JSON.stringify(value)).toBe(before);
      }),
    );
  });
});
