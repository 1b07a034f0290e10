/**
 * Key paths into a definition, as segments and as text.
 *
 * Issues are built with segment arrays (so the YAML node can be found again without parsing
 * text back) and shown as `steps[2].routes[0].target`, the form a reader finds in the file.
 */

/** One step into a definition value: a mapping key or a list index. */
export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Render segments as `steps[2].http_config.headers["X-Trace"]`; the root is `''`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}
