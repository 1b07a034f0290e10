/**
 * Optional packages: ONNX Runtime (AI_INFERENCE steps), PGlite (the embedded cloud database)
 * and fastify (the control plane's and the edge agent's HTTP servers). They are optional peer
 * dependencies, so embedding the engine on SQLite or PostgreSQL downloads none of them; each
 * is loaded the first time a feature needs it, and a missing one fails that feature — not the
 * start of the process — with an error that names what to install.
 */
import { createRequire } from 'node:module';
import { SaffronError } from './errors.js';

const requireHere = createRequire(import.meta.url);

/** A feature needs a package that is not installed (`DEPENDENCY_MISSING`). */
export class DependencyMissingError extends SaffronError {
  override readonly name = 'DependencyMissingError';

  constructor(packages: readonly string[], feature: string, cause: unknown) {
    super(
      'DEPENDENCY_MISSING',
      `${feature} needs the optional package${packages.length > 1 ? 's' : ''} ${packages.join(', ')}: npm install ${packages.join(' ')}`,
      { cause, details: { packages: [...packages] } },
    );
  }
}

/** Whether `error` says that one of `packages` itself (not one of its imports) is absent. */
function isMissing(error: unknown, packages: readonly string[]): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && packages.some((p) => message.includes(`'${p}'`));
}

/**
 * Import optional `packages` with `load` (a dynamic `import()` written where the package is
 * used, so it resolves from there). A missing one becomes a {@link DependencyMissingError}
 * naming them all; any other failure is rethrown as it is.
 */
export async function importOptional<T>(
  packages: readonly string[],
  feature: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, packages)) throw new DependencyMissingError(packages, feature, error);
    throw error;
  }
}

/**
 * Load the CommonJS package `name` synchronously, for a feature whose API is synchronous; a
 * missing package becomes a {@link DependencyMissingError}.
 */
export function requireOptional<T>(name: string, feature: string): T {
  try {
    return requireHere(name) as T;
  } catch (error) {
    if (isMissing(error, [name])) throw new DependencyMissingError([name], feature, error);
    throw error;
  }
}
