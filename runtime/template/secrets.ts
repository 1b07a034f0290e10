/**
 * Secret providers. Templates read secrets through a provider at render time so their values
 * never have to sit in workflow state (which is persisted, audited and synced to the edge).
 *
 * Each secret also names the hosts it may be sent to. Whoever can change a workflow
 * definition can choose an HTTP step's URL; without a binding, a definition that sends
 * `{{ secrets.ACQ_KEY }}` to an address of its author's choosing would hand the key away.
 * The binding is declared where the value is (the same environment, the same map), by the
 * operator of the machine, not in the definition.
 */

/** Source of secret values by name; `undefined` when the secret is unknown. */
export interface SecretProvider {
  get(name: string): string | undefined;
  /**
   * Host patterns the secret may be sent to (see `docs/outbound-requests.md`); `undefined`
   * or empty when none are declared, which refuses sending it anywhere.
   */
  hosts?(name: string): readonly string[] | undefined;
}

/** Prefix of the environment variables {@link envSecrets} reads. */
export const SECRET_ENV_PREFIX = 'SAFFRON_SECRET_';
/** Suffix of the variable holding a secret's hosts: `SAFFRON_SECRET_<NAME>_HOSTS`. */
export const SECRET_HOSTS_ENV_SUFFIX = '_HOSTS';

/** A comma-separated host list as patterns, blanks dropped. */
export function parseSecretHosts(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '');
}

/**
 * Secrets from environment variables: `secrets.API_KEY` reads `SAFFRON_SECRET_API_KEY`, and
 * the hosts it may be sent to from `SAFFRON_SECRET_API_KEY_HOSTS` (comma-separated).
 * Lookup happens on every `get`, so rotated values are seen; a name not found as written is
 * also tried upper-cased (`secrets.api_key` → `SAFFRON_SECRET_API_KEY`), and its hosts are
 * read under the same spelling as its value.
 */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretProvider {
  const spelling = (name: string): string =>
    env[SECRET_ENV_PREFIX + name] === undefined ? name.toUpperCase() : name;
  return {
    get: (name) => env[SECRET_ENV_PREFIX + spelling(name)],
    hosts: (name) =>
      parseSecretHosts(env[SECRET_ENV_PREFIX + spelling(name) + SECRET_HOSTS_ENV_SUFFIX]),
  };
}

/** A secret given to {@link mapSecrets} with the hosts it may be sent to. */
export interface BoundSecret {
  value: string;
  hosts: readonly string[];
}

/**
 * Secrets from a fixed map, for tests and embedding. The map is copied. A plain string is a
 * secret with no declared hosts (usable by function steps, refused by HTTP steps); a
 * {@link BoundSecret} carries its hosts.
 */
export function mapSecrets(values: Record<string, string | BoundSecret>): SecretProvider {
  const secrets = new Map(
    Object.entries(values).map(([name, secret]) =>
      typeof secret === 'string'
        ? [name, { value: secret, hosts: [] as readonly string[] }]
        : [name, { value: secret.value, hosts: [...secret.hosts] }],
    ),
  );
  return {
    get: (name) => secrets.get(name)?.value,
    hosts: (name) => secrets.get(name)?.hosts,
  };
}
