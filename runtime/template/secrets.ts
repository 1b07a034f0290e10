/**
 * Secret providers. Templates read secrets through a provider at render time so their values
 * never have to sit in workflow state (which is persisted, audited and synced to the edge).
 */

/** Source of secret values by name; `undefined` when the secret is unknown. */
export interface SecretProvider {
  get(name: string): string | undefined;
}

/** Prefix of the environment variables {@link envSecrets} reads. */
export const SECRET_ENV_PREFIX = 'SAFFRON_SECRET_';

/**
 * Secrets from environment variables: `secrets.API_KEY` reads `SAFFRON_SECRET_API_KEY`.
 * Lookup happens on every `get`, so rotated values are seen; a name not found as written is
 * also tried upper-cased (`secrets.api_key` → `SAFFRON_SECRET_API_KEY`).
 */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretProvider {
  return {
    get: (name) => env[SECRET_ENV_PREFIX + name] ?? env[SECRET_ENV_PREFIX + name.toUpperCase()],
  };
}

/** Secrets from a fixed map, for tests and embedding. The map is copied. */
export function mapSecrets(values: Record<string, string>): SecretProvider {
  const secrets = new Map(Object.entries(values));
  return { get: (name) => secrets.get(name) };
}
