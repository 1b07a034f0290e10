/** The error raised while scanning or rendering `{{ ... }}` templates. */
import { SaffronError, type SaffronErrorOptions } from '../errors.js';

/** `TEMPLATE_SYNTAX`: malformed braces or reference; `TEMPLATE_UNRESOLVED`: nothing to insert. */
export type TemplateErrorCode = 'TEMPLATE_SYNTAX' | 'TEMPLATE_UNRESOLVED';

/**
 * A template is malformed (`TEMPLATE_SYNTAX`) or names something that does not resolve
 * (`TEMPLATE_UNRESOLVED`). `details` carry the `reference` and, when known, the key `path`
 * being rendered (e.g. `http_config.headers.Authorization`) — never a secret's value.
 */
export class TemplateError extends SaffronError {
  override readonly name = 'TemplateError';

  constructor(code: TemplateErrorCode, message: string, options: SaffronErrorOptions = {}) {
    super(code, message, options);
  }
}
