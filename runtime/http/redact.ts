/**
 * Redaction of secret values from everything an HTTP attempt reports. A secret rendered into
 * a URL or header can come back in an error (an invalid URL quoted by the parser, a server
 * echoing the request in a 500 page, an upstream that reflects its Authorization header in
 * the response body). Errors land in logs and audit rows, and responses in workflow state,
 * which is persisted and synced to the edge; none of those may hold a secret.
 */

/** What replaces a secret value. */
export const REDACTED = '[REDACTED]';

/** The forms a secret takes once encoded into a URL, a query string or JSON text. */
function encodedForms(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), encodeURI(secret)];
  forms.push(new URLSearchParams([['', secret]]).toString().slice(1));
  forms.push(JSON.stringify(secret).slice(1, -1));
  return forms;
}

/** Collects the secret values used by an attempt and scrubs them from text and values. */
export class Redactor {
  #forms: string[] = [];

  /** Register secret values (empty strings are ignored). */
  add(secrets: readonly string[]): void {
    const forms = new Set(this.#forms);
    for (const secret of secrets) {
      if (secret === '') continue;
      for (const form of encodedForms(secret)) if (form !== '') forms.add(form);
    }
    // Longest first, so a secret containing another one is replaced whole.
    this.#forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** `text` with every known secret form replaced by {@link REDACTED}. */
  text(text: string): string {
    let result = text;
    for (const form of this.#forms) result = result.split(form).join(REDACTED);
    return result;
  }

  /** A copy of a JSON-like value with secrets redacted from strings and object keys. */
  value(value: unknown): unknown {
    if (this.#forms.length === 0) return value;
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (typeof value !== 'object' || value === null) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(copy, this.text(key), {
        value: this.value(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  }

  /**
   * A stand-in for `error` safe to keep as a `cause`: same name and `code`, redacted message
   * and stack, causes redacted the same way (a few levels deep). Other properties, which may
   * hold the request (undici and URL errors carry `input`), are dropped.
   */
  error(error: unknown, depth = 0): Error {
    const source = error instanceof Error ? error : new Error(String(error));
    const cause = depth < 4 && source.cause !== undefined ? source.cause : undefined;
    const copy = new Error(
      this.text(source.message),
      cause === undefined ? undefined : { cause: this.error(cause, depth + 1) },
    );
    copy.name = source.name;
    copy.stack = source.stack === undefined ? undefined : this.text(source.stack);
    const code = (source as { code?: unknown }).code;
    if (typeof code === 'string') Object.assign(copy, { code });
    return copy;
  }
}
