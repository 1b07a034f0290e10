import { describe, expect, it } from 'vitest';
import {
  mapSecrets,
  renderTemplate,
  renderTemplateWithSecrets,
  TemplateError,
  type TemplateScope,
} from '../../runtime/template/index.js';

const scope: TemplateScope = {
  state: {
    amount: 12.5,
    count: 3,
    approved: true,
    nothing: null,
    name: 'Ada',
    items: [{ id: 'a1', tags: ['x'] }],
    customer: { tier: 'gold', address: { city: 'Lyon' } },
    'odd key': 'odd',
  },
  context: { loop_item: { sku: 'X1' }, loop_index: 2 },
  secrets: mapSecrets({ API_TOKEN: 's3cr3t', OTHER: 'other-value', EMPTY: '' }),
};

function templateError(value: unknown, options?: { path?: string }, s = scope): TemplateError {
  try {
    renderTemplate(value, s, options);
  } catch (error) {
    if (error instanceof TemplateError) return error;
    throw error;
  }
  throw new Error('expected a TemplateError');
}

describe('renderTemplate: a whole-string reference keeps the JSON type', () => {
  it.each([
    ['{{ amount }}', 12.5],
    ['{{state.count}}', 3],
    ['{{  approved  }}', true],
    ['{{ nothing }}', null],
    ['{{ name }}', 'Ada'],
    ['{{ customer }}', { tier: 'gold', address: { city: 'Lyon' } }],
    ['{{ items[0].tags }}', ['x']],
    ["{{ state['odd key'] }}", 'odd'],
    ['{{ customer.address["city"] }}', 'Lyon'],
    ['{{ context.loop_item }}', { sku: 'X1' }],
    ['{{ context.loop_index }}', 2],
    ['{{ secrets.API_TOKEN }}', 's3cr3t'],
  ])('%s → %j', (template, expected) => {
    expect(renderTemplate(template, scope)).toEqual(expected);
  });

  it('allows braces inside quoted keys', () => {
    const s = { state: { '}}': 1, '{{x}}': 2 } };
    expect(renderTemplate("{{ state['}}'] }}", s)).toBe(1);
    expect(renderTemplate('a{{ state["{{x}}"] }}b', s)).toBe('a2b');
  });

  it('returns a copy, not the state object itself', () => {
    const rendered = renderTemplate('{{ customer }}', scope) as Record<string, unknown>;
    expect(rendered).not.toBe(scope.state.customer);
    rendered.tier = 'changed';
    expect((scope.state.customer as Record<string, unknown>).tier).toBe('gold');
  });
});

describe('renderTemplate: interpolation inside longer strings', () => {
  it.each([
    ['Hello {{ name }}!', 'Hello Ada!'],
    ['{{ name }}{{ name }}', 'AdaAda'],
    [' {{ count }}', ' 3'],
    ['n={{ count }}', 'n=3'],
    ['amount={{ amount }}', 'amount=12.5'],
    ['ok={{ approved }}', 'ok=true'],
    ['v={{ nothing }}', 'v=null'],
    ['c={{ customer.address }}', 'c={"city":"Lyon"}'],
    ['t={{ items[0].tags }}', 't=["x"]'],
    ['Bearer {{ secrets.API_TOKEN }}', 'Bearer s3cr3t'],
    ['/items/{{ context.loop_item.sku }}?i={{ context.loop_index }}', '/items/X1?i=2'],
    ['no braces', 'no braces'],
    ['single { brace } and }} only', 'single { brace } and }} only'],
    ['', ''],
  ])('%s → %s', (template, expected) => {
    expect(renderTemplate(template, scope)).toBe(expected);
  });
});

describe('renderTemplate: deep walk', () => {
  it('renders values (not keys) of nested objects and arrays and leaves input untouched', () => {
    const input = {
      url: 'https://api/{{ items[0].id }}',
      '{{ name }}': 'key stays',
      body: { amount: '{{ amount }}', list: ['{{ count }}', 'x', 5, null, false] },
      headers: { Authorization: 'Bearer {{ secrets.API_TOKEN }}' },
    };
    const snapshot = structuredClone(input);
    expect(renderTemplate(input, scope)).toEqual({
      url: 'https://api/a1',
      '{{ name }}': 'key stays',
      body: { amount: 12.5, list: [3, 'x', 5, null, false] },
      headers: { Authorization: 'Bearer s3cr3t' },
    });
    expect(input).toEqual(snapshot);
  });

  it('returns non-string scalars unchanged', () => {
    for (const value of [1, true, null, undefined])
      expect(renderTemplate(value, scope)).toBe(value);
  });
});

describe('renderTemplate: unresolved references are errors', () => {
  it('names the reference and the caller-given key path', () => {
    const error = templateError(
      { headers: { Authorization: 'Bearer {{ state.token }}' } },
      { path: 'http_config' },
    );
    expect(error.code).toBe('TEMPLATE_UNRESOLVED');
    expect(error.name).toBe('TemplateError');
    expect(error.message).toBe(
      "unresolved template reference 'state.token' at http_config.headers.Authorization",
    );
    expect(error.details).toEqual({
      reference: 'state.token',
      path: 'http_config.headers.Authorization',
    });
  });

  it('names array positions and odd keys in the key path', () => {
    expect(templateError({ list: ['ok', '{{ missing }}'] }).details.path).toBe('list[1]');
    expect(templateError({ 'a b': '{{ missing }}' }).details.path).toBe("['a b']");
    expect(templateError('{{ missing }}').message).toBe("unresolved template reference 'missing'");
  });

  it.each([
    '{{ missing }}',
    '{{ items[3] }}',
    '{{ customer.address.zip }}',
    '{{ name.length }}',
    '{{ customer.constructor }}',
    '{{ context.nope }}',
  ])('%s', (template) => {
    expect(templateError(template).code).toBe('TEMPLATE_UNRESOLVED');
  });

  it('treats a missing context as unresolved', () => {
    expect(templateError('{{ context.loop_item }}', {}, { state: {} }).code).toBe(
      'TEMPLATE_UNRESOLVED',
    );
  });

  it('reports unknown secrets and a missing provider without leaking values', () => {
    const unknown = templateError('Bearer {{ secrets.NOPE }}', { path: 'h' });
    expect(unknown.code).toBe('TEMPLATE_UNRESOLVED');
    expect(unknown.message).toBe(
      "unresolved template reference 'secrets.NOPE' at h: secret 'NOPE' is not set",
    );
    const noProvider = templateError('{{ secrets.API_TOKEN }}', {}, { state: {} });
    expect(noProvider.message).toContain('no secret provider is configured');
  });
});

describe('renderTemplate: syntax errors', () => {
  it.each([
    ['x {{ name', "unclosed '{{' at column 3 in template at field"],
    ['{{ a {{ b }}', "unclosed '{{' at column 1 in template at field"],
    ['{{ }}', "empty '{{ }}' at column 1 in template at field"],
    [
      '{{ a + 1 }}',
      "invalid template reference '{{ a + 1 }}' at field: expected end of path at column 3",
    ],
    [
      '{{ len(a) }}',
      "invalid template reference '{{ len(a) }}' at field: expected end of path at column 4",
    ],
    ["{{ it's }}", "invalid template reference '{{ it's }}' at field: unterminated string"],
    ['{{ secrets }}', "invalid secret reference '{{ secrets }}' at field: expected secrets.NAME"],
    [
      '{{ secrets.A.B }}',
      "invalid secret reference '{{ secrets.A.B }}' at field: expected secrets.NAME",
    ],
  ])('%s', (template, message) => {
    const error = templateError({ field: template });
    expect(error.code).toBe('TEMPLATE_SYNTAX');
    expect(error.message.startsWith(message)).toBe(true);
    expect(error.details.path).toBe('field');
  });
});

describe('renderTemplateWithSecrets', () => {
  it('reports the distinct non-empty secret values used', () => {
    const { value, secretsUsed, secretNames } = renderTemplateWithSecrets(
      {
        a: 'Bearer {{ secrets.API_TOKEN }}',
        b: ['{{ secrets.API_TOKEN }}', '{{ secrets.OTHER }}', '{{ secrets.EMPTY }}'],
      },
      scope,
    );
    expect(value).toEqual({ a: 'Bearer s3cr3t', b: ['s3cr3t', 'other-value', ''] });
    expect(secretsUsed).toEqual(['s3cr3t', 'other-value']);
    expect(secretNames).toEqual(['API_TOKEN', 'OTHER', 'EMPTY']);
  });

  it('reports no secrets when none are referenced', () => {
    expect(renderTemplateWithSecrets('{{ name }}', scope)).toEqual({
      value: 'Ada',
      secretsUsed: [],
      secretNames: [],
    });
  });
});
