/**
 * Rendering: a string that is exactly one `{{ ref }}` becomes the referenced value with its
 * JSON type (a deep copy, so the result never aliases state); references inside longer text
 * are interpolated — strings as they are, everything else as JSON text (`null`, `true`,
 * `42`, `{"a":1}`, `[1,2]`).
 */
import { scanTemplate } from './scan.js';
import { resolveReference, type TemplateScope } from './reference.js';
import { mapStrings } from './walk.js';

/** Options of {@link renderTemplate}. */
export interface RenderTemplateOptions {
  /** Key path of `value` inside its document, used in error messages, e.g. `http_config`. */
  path?: string;
}

/** A rendered value and the secret values it contains. */
export interface RenderedTemplate {
  value: unknown;
  /** Distinct non-empty secret values inserted, for redaction from logs and errors. */
  secretsUsed: string[];
  /** Distinct names of the secrets referenced, e.g. `['ACQUIRER_TOKEN']`. */
  secretNames: string[];
}

function copy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

function interpolate(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Render every string inside `value` (deeply; object keys are left alone) and report the
 * secret values used. Never mutates `value`. Throws {@link TemplateError} for malformed
 * templates (`TEMPLATE_SYNTAX`) and references that do not resolve (`TEMPLATE_UNRESOLVED`).
 */
export function renderTemplateWithSecrets(
  value: unknown,
  scope: TemplateScope,
  options: RenderTemplateOptions = {},
): RenderedTemplate {
  const secretsUsed = new Set<string>();
  const secretNames = new Set<string>();
  const rendered = mapStrings(value, options.path ?? '', (text, keyPath) => {
    if (!text.includes('{{')) return text;
    const parts = scanTemplate(text, keyPath);
    const [only] = parts;
    if (parts.length === 1 && typeof only === 'object') {
      return copy(resolveReference(only, scope, keyPath, secretsUsed, secretNames));
    }
    return parts
      .map((part) =>
        typeof part === 'string'
          ? part
          : interpolate(resolveReference(part, scope, keyPath, secretsUsed, secretNames)),
      )
      .join('');
  });
  return { value: rendered, secretsUsed: [...secretsUsed], secretNames: [...secretNames] };
}

/** Render every string inside `value`; see {@link renderTemplateWithSecrets}. */
export function renderTemplate(
  value: unknown,
  scope: TemplateScope,
  options: RenderTemplateOptions = {},
): unknown {
  return renderTemplateWithSecrets(value, scope, options).value;
}
