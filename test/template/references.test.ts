import { describe, expect, it } from 'vitest';
import { listTemplateReferences, TemplateError } from '../../runtime/template/index.js';

describe('listTemplateReferences', () => {
  it('lists every reference with its key path, without resolving', () => {
    expect(
      listTemplateReferences({
        http_config: {
          url: 'https://x/{{ items[0].id }}?n={{state.amount}}',
          headers: { Authorization: 'Bearer {{ secrets.TOKEN }}' },
        },
        steps: [{ body: '{{ context.loop_item }}' }, 'plain', 7],
        '{{ key }}': 'keys are not templates',
      }),
    ).toEqual([
      { path: 'http_config.url', reference: 'items[0].id' },
      { path: 'http_config.url', reference: 'state.amount' },
      { path: 'http_config.headers.Authorization', reference: 'secrets.TOKEN' },
      { path: 'steps[0].body', reference: 'context.loop_item' },
    ]);
  });

  it('uses an empty path for a top-level string and finds nothing without braces', () => {
    expect(listTemplateReferences('{{ a }}')).toEqual([{ path: '', reference: 'a' }]);
    expect(listTemplateReferences({ a: 'x', b: [1, null, { c: 'y' }] })).toEqual([]);
    expect(listTemplateReferences(42)).toEqual([]);
  });

  it('throws TEMPLATE_SYNTAX with the key path for malformed templates', () => {
    let caught: unknown;
    try {
      listTemplateReferences({ http_config: { headers: { Authorization: 'Bearer {{ token' } } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TemplateError);
    const error = caught as TemplateError;
    expect(error.code).toBe('TEMPLATE_SYNTAX');
    expect(error.details.path).toBe('http_config.headers.Authorization');
    expect(error.message).toContain('http_config.headers.Authorization');
    expect(() => listTemplateReferences(['{{ a.b[ }}'])).toThrow(/at \[0\]/);
  });
});
