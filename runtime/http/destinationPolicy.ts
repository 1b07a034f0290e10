/**
 * The rule every outbound connection of HTTP steps and webhook deliveries passes: the
 * address connected to must be public, unless the operator of this machine allowed its
 * network, and must never be one of this machine's own refused ports (the edge agent's local
 * API) on a local address, even when loopback is allowed.
 *
 * The rule is applied to the address the socket connects to — inside the DNS `lookup` the
 * socket uses (see {@link DestinationPolicy.lookup}) — not to the host name in the URL: a
 * name that resolves to 127.0.0.1, or that changes its answer between a check and the
 * connect (DNS rebinding), is refused all the same.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { SaffronError } from '../errors.js';
import {
  parsePrivateNetworkList,
  PrivateNetworkAllowance,
  privateNetworkOf,
  unbracket,
  type PrivateNetworkGroup,
} from './privateNetworks.js';

/** Environment variable the command line reads {@link DestinationPolicyOptions.allowedPrivateNetworks} from. */
export const ALLOW_PRIVATE_ENV = 'SAFFRON_HTTP_ALLOW_PRIVATE';

/** Options of a {@link DestinationPolicy}. */
export interface DestinationPolicyOptions {
  /**
   * Non-public networks outbound requests may reach: group names (`loopback`, `link-local`,
   * `private`, `cgnat`, `unspecified`, `reserved`), CIDR ranges or single addresses. Empty by
   * default: only public addresses are reached.
   */
  allowedPrivateNetworks?: readonly string[];
  /**
   * Ports of this machine refused on every local address (loopback, unspecified and the
   * machine's own interface addresses) whatever the allowance: the edge agent passes its
   * local API's port. A function is asked on every connection (a port chosen at listen time).
   */
  refusedLocalPorts?: readonly number[] | (() => readonly number[]);
}

/** The options the command line takes from the environment: `SAFFRON_HTTP_ALLOW_PRIVATE`. */
export function destinationOptionsFromEnv(env: NodeJS.ProcessEnv): DestinationPolicyOptions {
  return { allowedPrivateNetworks: parsePrivateNetworkList(env[ALLOW_PRIVATE_ENV]) };
}

/**
 * An outbound connection was refused by the destination policy (`DESTINATION_REFUSED`, not
 * retryable). `details` name the host, the address and why; never a request header or body.
 */
export class DestinationRefusedError extends SaffronError {
  override readonly name = 'DestinationRefusedError';

  constructor(
    host: string,
    address: string,
    reason: PrivateNetworkGroup | 'local-port',
    port: number,
  ) {
    const why =
      reason === 'local-port'
        ? `port ${port} of this machine is refused (its own local API)`
        : `${address} is a ${reason} address; allow it with ${ALLOW_PRIVATE_ENV} or allowedPrivateNetworks`;
    super('DESTINATION_REFUSED', `connecting to ${host} was refused: ${why}`, {
      details: { host, address, reason, port },
    });
  }
}

function isLocalAddress(address: string): boolean {
  const group = privateNetworkOf(address);
  if (group === 'loopback' || group === 'unspecified') return true;
  const ip = unbracket(address).toLowerCase();
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((entry) => entry.address.toLowerCase() === ip),
  );
}

/** The connection rule of one process part (a runtime, a gateway, an edge agent). */
export class DestinationPolicy {
  readonly #allowance: PrivateNetworkAllowance;
  readonly #refusedLocalPorts: () => readonly number[];

  /** @throws RangeError for an allowance entry that is not a group, address or CIDR. */
  constructor(options: DestinationPolicyOptions = {}) {
    this.#allowance = new PrivateNetworkAllowance(options.allowedPrivateNetworks ?? []);
    const ports = options.refusedLocalPorts ?? [];
    this.#refusedLocalPorts = typeof ports === 'function' ? ports : () => ports;
  }

  /** The error refusing a connection to `address`:`port` for `host`, or `undefined` when allowed. */
  refusal(host: string, address: string, port: number): DestinationRefusedError | undefined {
    if (this.#refusedLocalPorts().includes(port) && isLocalAddress(address)) {
      return new DestinationRefusedError(host, address, 'local-port', port);
    }
    const group = privateNetworkOf(address);
    if (group === undefined || this.#allowance.allows(address)) return undefined;
    return new DestinationRefusedError(host, address, group, port);
  }

  /**
   * The refusal for a URL whose host is an IP literal (sockets skip the lookup for those),
   * `undefined` for an allowed literal or a host name (checked at connect time).
   */
  literalRefusal(url: URL): DestinationRefusedError | undefined {
    const host = unbracket(url.hostname);
    if (isIP(host) === 0) return undefined;
    return this.refusal(url.hostname, host, effectivePort(url));
  }

  /**
   * A `lookup` for `net.connect` that resolves like `dns.lookup` and fails with
   * {@link DestinationRefusedError} when any address it would hand the socket is refused, so
   * the address checked is the address connected to.
   */
  lookup(host: string, port: number): LookupFunction {
    return (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) {
          callback(error, '', 4);
          return;
        }
        for (const { address } of addresses) {
          const refused = this.refusal(host, address, port);
          if (refused !== undefined) {
            callback(refused, '', 4);
            return;
          }
        }
        if (options.all === true) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          return;
        }
        const [first] = addresses;
        if (first === undefined) {
          callback(
            Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }),
            '',
            4,
          );
          return;
        }
        callback(null, first.address, first.family);
      });
    };
  }
}

/** The port a URL connects to: its own, or the scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
