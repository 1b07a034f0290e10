/**
 * One `{{ ... }}` reference: a path rooted at `state` (also when bare), `context` or
 * `secrets`. Paths are parsed and resolved by the expression module's path helpers, so
 * templates and conditions agree on what `a.b[0]['k']` means.
 */
import { parsePath, resolvePath, type PathSegment } from '../expression/index.js';
import { TemplateError } from './errors.js';
import type { SecretProvider } from './secrets.js';

/** The values a template can reference. */
export interface TemplateScope {
  state: Record<string, unknown>;
  context?: Record<string, unknown>;
  secrets?: SecretProvider;
}

/** A parsed reference; `source` is the trimmed text between the braces. */
export interface TemplateReference {
  readonly source: string;
  readonly root: 'state' | 'context' | 'secrets';
  readonly segments: readonly PathSegment[];
}

/** ` at <keyPath>` for messages, or nothing at the top level. */
export function atKeyPath(keyPath: string): string {
  return keyPath === '' ? '' : ` at ${keyPath}`;
}

function details(source: string, keyPath: string): Record<string, unknown> {
  return keyPath === '' ? { reference: source } : { reference: source, path: keyPath };
}

/** Parse the text between the braces. Throws {@link TemplateError} `TEMPLATE_SYNTAX`. */
export function parseReference(source: string, keyPath: string): TemplateReference {
  let head: string;
  let segments: PathSegment[];
  try {
    ({ head, segments } = parsePath(source));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TemplateError(
      'TEMPLATE_SYNTAX',
      `invalid template reference '{{ ${source} }}'${atKeyPath(keyPath)}: ${reason} (only paths such as state.a.b[0] are allowed)`,
      { cause: error, details: details(source, keyPath) },
    );
  }
  if (head === 'secrets') {
    if (segments.length !== 1 || typeof segments[0] !== 'string') {
      throw new TemplateError(
        'TEMPLATE_SYNTAX',
        `invalid secret reference '{{ ${source} }}'${atKeyPath(keyPath)}: expected secrets.NAME`,
        { details: details(source, keyPath) },
      );
    }
    return { source, root: 'secrets', segments };
  }
  if (head === 'state' || head === 'context') return { source, root: head, segments };
  return { source, root: 'state', segments: [head, ...segments] };
}

/**
 * The value `reference` names in `scope`; secret values read are added to `secretsUsed`, and
 * their names to `secretNames` (which decide where the rendered text may be sent).
 * Throws {@link TemplateError} `TEMPLATE_UNRESOLVED` when it resolves to `undefined`.
 */
export function resolveReference(
  reference: TemplateReference,
  scope: TemplateScope,
  keyPath: string,
  secretsUsed: Set<string>,
  secretNames?: Set<string>,
): unknown {
  const { root, segments, source } = reference;
  if (root === 'secrets') {
    const name = String(segments[0]);
    const value = scope.secrets?.get(name);
    if (value === undefined) {
      const why =
        scope.secrets === undefined
          ? 'no secret provider is configured'
          : `secret '${name}' is not set`;
      throw new TemplateError(
        'TEMPLATE_UNRESOLVED',
        `unresolved template reference '${source}'${atKeyPath(keyPath)}: ${why}`,
        { details: { ...details(source, keyPath), secret: name } },
      );
    }
    if (value !== '') secretsUsed.add(value);
    secretNames?.add(name);
    return value;
  }
  const value = resolvePath(root === 'state' ? scope.state : scope.context, segments);
  if (value === undefined) {
    throw new TemplateError(
      'TEMPLATE_UNRESOLVED',
      `unresolved template reference '${source}'${atKeyPath(keyPath)}`,
      { details: details(source, keyPath) },
    );
  }
  return value;
}
