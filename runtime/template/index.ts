/**
 * Double-brace templates in step configuration: `{{ state.x }}`, `{{ x }}` (a bare path is a
 * state path), `{{ context.loop_item }}`, `{{ secrets.NAME }}`, with paths like `a.b[0]`.
 *
 * Only references are allowed, not expressions, so rendering cannot fail halfway through a
 * computation and a template can be checked statically at definition load
 * ({@link listTemplateReferences}). A reference that does not resolve is an error rather than
 * text left verbatim: a literal `{{ token }}` sent as an Authorization header fails far from
 * its cause. Secrets are read from a {@link SecretProvider} at render time and reported back
 * ({@link renderTemplateWithSecrets}) so callers can redact them; they are never put in state.
 *
 * A string that is exactly one template keeps the referenced value's JSON type; inside longer
 * text, strings are inserted as they are and other values as JSON (`null`, `42`, `{"a":1}`).
 */
export { TemplateError, type TemplateErrorCode } from './errors.js';
export type { TemplateScope } from './reference.js';
export { listTemplateReferences, type TemplateReferenceLocation } from './references.js';
export {
  renderTemplate,
  renderTemplateWithSecrets,
  type RenderedTemplate,
  type RenderTemplateOptions,
} from './render.js';
export {
  envSecrets,
  mapSecrets,
  parseSecretHosts,
  SECRET_ENV_PREFIX,
  SECRET_HOSTS_ENV_SUFFIX,
  type BoundSecret,
  type SecretProvider,
} from './secrets.js';
