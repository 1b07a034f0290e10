/**
 * Which cloud URL a terminal may talk to. Signatures protect what the cloud sends (commands,
 * definitions, configuration), but not what the device sends — card payloads, transaction
 * records, its own request signatures that a listener could study — nor a first-use key pin.
 * So the agent refuses a cloud URL that is not HTTPS, except on loopback (127.0.0.0/8, ::1,
 * localhost: a test, or a local TLS-terminating proxy) or when plain HTTP is allowed
 * explicitly (`--insecure-cloud-url`, `insecureCloudUrl`) by whoever runs the terminal.
 */
import { isIP } from 'node:net';
import { ConfigError } from './errors.js';

/** Whether `hostname` (as a URL gives it, IPv6 in brackets) is a loopback host. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host);
  return false;
}

/**
 * The cloud URL, parsed, when the agent may use it; throws CLOUD_URL_INSECURE for plain
 * HTTP to a host that is not loopback unless `allowInsecure`, and for any other scheme.
 */
export function checkCloudUrl(cloudUrl: string, allowInsecure = false): URL {
  let url: URL;
  try {
    url = new URL(cloudUrl);
  } catch (error) {
    throw new ConfigError('CLOUD_URL_INSECURE', `the cloud URL is not a URL: '${cloudUrl}'`, {
      cause: error,
    });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol !== 'http:')
    throw new ConfigError(
      'CLOUD_URL_INSECURE',
      `the cloud URL must be https:// (got ${url.protocol}//)`,
    );
  if (isLoopbackHost(url.hostname) || allowInsecure) return url;
  throw new ConfigError(
    'CLOUD_URL_INSECURE',
    `the cloud URL ${url.origin} is plain HTTP to a host that is not loopback: card data, device signatures and the cloud key would cross the network unprotected; use https://, or pass --insecure-cloud-url (insecureCloudUrl) to allow it on a network you trust`,
  );
}
