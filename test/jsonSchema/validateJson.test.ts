/**
 * The JSON Schema subset of command payloads: which schemas are accepted, and what a
 * payload is told about each failing value, by path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonSchema, jsonEqual, validateJson } from '../../runtime/index.js';

describe('checkJsonSchema', () => {
  it('accepts the subset with annotations, and names what it refuses by path', () => {
    expect(
      checkJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        title: 'reboot',
        type: ['object', 'null'],
        properties: { tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 3 } },
        additionalProperties: { type: 'string', maxLength: 10 },
      }),
    ).toEqual([]);
    expect(checkJsonSchema(true)).toEqual([]);
    expect(
      checkJsonSchema({
        type: 'decimal',
        oneOf: [],
        properties: { a: { $ref: '#/x' }, b: 'string' },
        required: ['a', 'a'],
        minLength: -1,
        minItems: 3,
        maxItems: 2,
        enum: [],
      }).map((i) => i.path),
    ).toEqual([
      '$.type',
      '$.oneOf',
      '$.properties.a.$ref',
      '$.properties.b',
      '$.required',
      '$.minLength',
      '$.enum',
      '$.minItems',
    ]);
    expect(checkJsonSchema([])).toEqual([
      { path: '$', message: 'a schema is an object or a boolean' },
    ]);
  });

  it('bounds depth', () => {
    let deep: unknown = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { items: deep };
    expect(checkJsonSchema(deep)[0]?.message).toMatch(/nest at most/);
  });
});

describe('validateJson', () => {
  const schema = {
    type: 'object',
    properties: {
      count: { type: 'integer', minimum: 1, maximum: 5 },
      ratio: { type: 'number' },
      name: { type: 'string', minLength: 2, maxLength: 3 },
      mode: { const: { fast: true, level: 2 } },
      tags: { type: 'array', items: { type: 'string', enum: ['x', 'y'] }, minItems: 1 },
    },
    required: ['count'],
    additionalProperties: false,
  };

  it('reports every failing value by path', () => {
    expect(
      validateJson(
        schema,
        {
          count: 2.5,
          ratio: 'high',
          name: 'ab€d',
          mode: { level: 2, fast: false },
          tags: ['x', 'z', 3],
          extra: 1,
        },
        '$.payload',
      ),
    ).toEqual([
      { path: '$.payload.count', message: 'expected integer, got number' },
      { path: '$.payload.ratio', message: 'expected number, got string' },
      { path: '$.payload.name', message: 'must be at most 3 characters long' },
      { path: '$.payload.mode', message: 'must be {"fast":true,"level":2}' },
      { path: '$.payload.tags[1]', message: 'must be one of "x", "y"' },
      { path: '$.payload.tags[2]', message: 'expected string, got integer' },
      { path: '$.payload.extra', message: 'is not an allowed property' },
    ]);
    expect(validateJson(schema, {})).toEqual([{ path: '$.count', message: 'is required' }]);
    expect(validateJson(schema, [])).toEqual([
      { path: '$', message: 'expected object, got array' },
    ]);
  });

  it('counts code points, takes 1.0 as an integer, and compares const by structure', () => {
    expect(
      validateJson(schema, { count: 5.0, name: '😀😀', mode: { level: 2, fast: true } }),
    ).toEqual([]);
    expect(validateJson(schema, { count: 0 })).toEqual([
      { path: '$.count', message: 'must be at least 1' },
    ]);
    expect(validateJson(false, null)).toEqual([{ path: '$', message: 'no value is allowed here' }]);
  });

  it('refuses a schema outside the subset instead of half-validating', () => {
    expect(() => validateJson({ pattern: '.*' }, 'x')).toThrow(/not a supported schema/);
  });

  it('accepts every value under the empty schema, and a value equals itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(validateJson({}, value)).toEqual([]);
        expect(jsonEqual(value, structuredClone(value))).toBe(true);
      }),
    );
  });
});
