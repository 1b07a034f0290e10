/** Static scan of the references a value's templates make, for definition validation. */
import { scanTemplate } from './scan.js';
import { mapStrings } from './walk.js';

/** A reference found by {@link listTemplateReferences}. */
export interface TemplateReferenceLocation {
  /** Key path of the string holding the reference (`''` for a top-level string). */
  path: string;
  /** The reference text between the braces, trimmed, e.g. `state.amount`. */
  reference: string;
}

/**
 * List every `{{ ... }}` reference inside `value` without resolving anything. Throws
 * {@link TemplateError} `TEMPLATE_SYNTAX`, naming the key path, for malformed templates.
 */
export function listTemplateReferences(value: unknown): TemplateReferenceLocation[] {
  const found: TemplateReferenceLocation[] = [];
  mapStrings(value, '', (text, path) => {
    if (!text.includes('{{')) return text;
    for (const part of scanTemplate(text, path)) {
      if (typeof part === 'object') found.push({ path, reference: part.source });
    }
    return text;
  });
  return found;
}
