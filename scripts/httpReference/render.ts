/**
 * The HTTP route reference (docs/reference/http-routes.md) rendered from the OpenAPI
 * document the server serves: one table of routes per tag, then each operation's
 * parameters, request body fields and answers. Rendering is pure, so the generator script and
 * the drift test share it.
 */

/** The parts of a JSON Schema the reference shows. */
interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  description?: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}

interface Response {
  description: string;
  headers?: Record<string, { description: string; required?: boolean }>;
  content?: Record<string, { schema?: Schema }>;
}

interface Operation {
  summary: string;
  tags: string[];
  security: Record<string, unknown>[];
  'x-saffron-roles'?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, Response>;
}

/** The OpenAPI document, as far as the reference reads it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** Headers every answer may carry: said once at the top, not per operation. */
const COMMON_HEADERS = new Set(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function auth(op: Operation): string {
  const schemes = op.security.flatMap((s) => Object.keys(s));
  if (schemes.length === 0) return 'none';
  const roles = op['x-saffron-roles'];
  return schemes
    .map((s) => (s === 'bearer' ? `token${roles ? ` (${roles.join(', ')})` : ''}` : 'device'))
    .join(' or ');
}

/** `string (1–200)`, `integer ≥ 0`, `ACTIVE \| PAUSED …`. */
function typeText(schema: Schema | undefined): string {
  if (!schema) return 'any';
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return [...new Set(variants.map(typeText))].join(' or ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) {
    const shown = schema.enum
      .slice(0, 8)
      .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    return shown.join(' \\| ') + (schema.enum.length > 8 ? ` … (${schema.enum.length})` : '');
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  let text = types.length ? types.join(' or ') : 'any';
  if (types.includes('array') && schema.items) text = `array of ${typeText(schema.items)}`;
  if (schema.format) text += ` (${schema.format})`;
  const range = (min: number | undefined, max: number | undefined, unit = '') =>
    min !== undefined && max !== undefined
      ? ` (${min}–${max}${unit})`
      : min !== undefined
        ? ` ≥ ${min}${unit}`
        : max !== undefined
          ? ` ≤ ${max}${unit}`
          : '';
  text += range(schema.minLength, schema.maxLength, ' chars');
  text += range(schema.minimum, schema.maximum);
  text += range(schema.minItems, schema.maxItems, ' items');
  return text;
}

function fieldsTable(title: string, schema: Schema | undefined): string[] {
  const properties = schema?.properties;
  if (!properties || Object.keys(properties).length === 0) {
    return schema ? [`${title}: ${typeText(schema)}.`, ''] : [];
  }
  const required = new Set(schema.required ?? []);
  return [
    `| ${title} | type | required |`,
    '|---|---|---|',
    ...Object.entries(properties).map(
      ([name, s]) => `| \`${name}\` | ${cell(typeText(s))} | ${required.has(name) ? 'yes' : ''} |`,
    ),
    '',
  ];
}

function operationSection(method: string, path: string, op: Operation): string[] {
  const lines = [
    `### ${method.toUpperCase()} ${path}`,
    '',
    `${op.summary}. Auth: ${auth(op)}.`,
    '',
  ];
  const params = op.parameters ?? [];
  if (params.length > 0) {
    lines.push('| parameter | in | type | required |', '|---|---|---|---|');
    for (const p of params)
      lines.push(
        `| \`${p.name}\` | ${p.in} | ${cell(typeText(p.schema))} | ${p.required ? 'yes' : ''} |`,
      );
    lines.push('');
  }
  const body = op.requestBody?.content['application/json']?.schema;
  if (body) lines.push(...fieldsTable('body field', body));
  const answers: string[] = [];
  for (const [status, response] of Object.entries(op.responses)) {
    if (status === 'default' || status === '429') continue;
    const headers = Object.keys(response.headers ?? {}).filter((h) => !COMMON_HEADERS.has(h));
    const types = Object.keys(response.content ?? {});
    const json = response.content?.['application/json']?.schema;
    const fields = json?.properties ? Object.keys(json.properties) : [];
    const parts = [
      fields.length ? `fields ${fields.map((f) => `\`${f}\``).join(', ')}` : '',
      json && !fields.length ? typeText(json) : '',
      types.length && !json ? types.join(', ') : '',
      headers.length ? `headers ${headers.join(', ')}` : '',
    ].filter(Boolean);
    answers.push(
      `- **${status}** ${response.description}${parts.length ? ` — ${parts.join('; ')}` : ''}`,
    );
  }
  lines.push(...answers, '');
  return lines;
}

/** The whole reference page for `doc`. */
export function renderHttpReference(doc: OpenApiDocument): string {
  const byTag = new Map<string, { method: string; path: string; op: Operation }[]>();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const tag = op.tags[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push({ method, path, op });
    }
  }
  const count = [...byTag.values()].reduce((n, ops) => n + ops.length, 0);
  const lines = [
    '# HTTP routes',
    '',
    '<!-- Generated from the OpenAPI document by `npm run docs:http`; do not edit by hand. -->',
    '',
    `Every operation of the control plane's HTTP API (${count} in all), generated from the`,
    'OpenAPI 3.1 document the server serves at `GET /api/v1/openapi.json`; a test fails when',
    'this page and the document differ. What the routes do — authentication, device',
    'signatures, replay protection, configuration layers — is explained in',
    '[HTTP API](http-api.md).',
    '',
    'Auth: `token` is an operator API token (`Authorization: Bearer …`), `device` a device',
    'signature (a device reaches only its own resources); the roles in brackets are the',
    "operator roles allowed, also in the document as each operation's `x-saffron-roles`. Every answer",
    'may carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; every route',
    'may answer **429** (with `Retry-After`) and errors as `application/problem+json`.',
    '',
  ];
  const tags = [...byTag.keys()];
  lines.push(tags.map((t) => `[${t}](#${t.replace(/ /g, '-')})`).join(' · '), '');
  for (const tag of tags) {
    const ops = byTag
      .get(tag)!
      .sort(
        (a, b) =>
          a.path.localeCompare(b.path) ||
          METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method),
      );
    lines.push(`## ${tag}`, '', '| method | path | what | auth |', '|---|---|---|---|');
    for (const { method, path, op } of ops)
      lines.push(`| ${method.toUpperCase()} | \`${path}\` | ${cell(op.summary)} | ${auth(op)} |`);
    lines.push('');
    for (const { method, path, op } of ops) lines.push(...operationSection(method, path, op));
  }
  return (
    lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}
