/**
 * Where a rendered request may go given the secrets it carries. Each secret the request's
 * URL, headers, query or body referenced must list the destination host; otherwise the
 * attempt fails before anything is sent, naming the secret (never its value) and the host.
 *
 * Patterns, compared case-insensitively and without a trailing dot:
 * - `api.example.com` — that host, on any port;
 * - `api.example.com:8443` — that host on that port (a URL without a port uses 80 or 443);
 * - `*.example.com` — any name under example.com (one label or more), not example.com itself;
 * - IP literals as in URLs: `10.1.2.3`, `[fd00::1]`, `[fd00::1]:8443`.
 */
import type { SecretProvider } from '../template/index.js';
import { effectivePort } from './destinationPolicy.js';
import { HttpStepError } from './errors.js';
import { SECRET_ENV_PREFIX, SECRET_HOSTS_ENV_SUFFIX } from '../template/secrets.js';

function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** Split `host[:port]` (IPv6 in brackets); `port` is `undefined` when absent. */
function splitPattern(pattern: string): { host: string; port: number | undefined } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(pattern.trim());
  if (match === null) return { host: normalHost(pattern.trim()), port: undefined };
  const [, host = '', port] = match;
  return { host: normalHost(host), port: port === undefined ? undefined : Number(port) };
}

/** Whether `pattern` admits `url`'s host and port. */
export function hostPatternAllows(pattern: string, url: URL): boolean {
  const { host, port } = splitPattern(pattern);
  if (port !== undefined && port !== effectivePort(url)) return false;
  const target = normalHost(url.hostname);
  if (host.startsWith('*.'))
    return target.endsWith(host.slice(1)) && target.length > host.length - 1;
  return host === target;
}

/**
 * Check every secret in `secretNames` may be sent to `url`.
 *
 * @throws {@link HttpStepError} `SECRET_DESTINATION_REFUSED` for the first that may not:
 *   no hosts declared, or none admitting `url`'s host.
 */
export function checkSecretDestinations(
  secretNames: readonly string[],
  url: URL,
  secrets: SecretProvider | undefined,
): void {
  for (const name of secretNames) {
    const hosts = secrets?.hosts?.(name) ?? [];
    if (hosts.some((pattern) => hostPatternAllows(pattern, url))) continue;
    const declare = `${SECRET_ENV_PREFIX}${name.toUpperCase()}${SECRET_HOSTS_ENV_SUFFIX}`;
    const why =
      hosts.length === 0
        ? `it declares no hosts; declare them in ${declare} (comma-separated) or with the secret's hosts`
        : `its hosts are ${hosts.join(', ')}`;
    throw new HttpStepError(
      'SECRET_DESTINATION_REFUSED',
      `secret '${name}' may not be sent to ${url.host}: ${why}`,
      { details: { secret: name, host: url.host, allowed_hosts: [...hosts] } },
    );
  }
}
