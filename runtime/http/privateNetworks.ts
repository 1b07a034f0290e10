/**
 * Which addresses an outbound request (HTTP step, webhook delivery) may connect to. A URL
 * chosen by a workflow author or a webhook registrant must not reach the machine's own
 * services (loopback), the cloud metadata endpoint (169.254.169.254), or the private network
 * behind the machine; otherwise a response or a delivery history becomes a scanner of what
 * the outside cannot see. The operator of the machine can allow some of these networks
 * (a test bench on loopback, an acquirer on the private network) by name or CIDR.
 *
 * IPv4-mapped IPv6 forms (`::ffff:127.0.0.1`) are matched by the IPv4 rules: Node's
 * `BlockList` compares them as the IPv4 address they carry.
 */
import { BlockList, isIP } from 'node:net';

/** Named groups of non-public networks, usable in an allowance list. */
export const PRIVATE_NETWORK_GROUPS = {
  loopback: ['127.0.0.0/8', '::1/128'],
  'link-local': ['169.254.0.0/16', 'fe80::/10'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  cgnat: ['100.64.0.0/10'],
  unspecified: ['0.0.0.0/8', '::/128'],
  reserved: ['240.0.0.0/4', '224.0.0.0/4', 'ff00::/8'],
} as const;

/** A name of {@link PRIVATE_NETWORK_GROUPS}. */
export type PrivateNetworkGroup = keyof typeof PRIVATE_NETWORK_GROUPS;

const GROUP_NAMES = Object.keys(PRIVATE_NETWORK_GROUPS) as PrivateNetworkGroup[];

function isGroup(name: string): name is PrivateNetworkGroup {
  return (GROUP_NAMES as string[]).includes(name);
}

function addCidr(list: BlockList, cidr: string): void {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address);
  if (family === 0) throw new RangeError(`'${cidr}' is not an IP address or CIDR range`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) {
    list.addAddress(address, type);
    return;
  }
  const prefix = Number(bits);
  if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) {
    throw new RangeError(`'${cidr}' has an invalid prefix length`);
  }
  list.addSubnet(address, prefix, type);
}

const GROUPS: ReadonlyArray<{ group: PrivateNetworkGroup; list: BlockList }> = GROUP_NAMES.map(
  (group) => {
    const list = new BlockList();
    for (const cidr of PRIVATE_NETWORK_GROUPS[group]) addCidr(list, cidr);
    return { group, list };
  },
);

/** Strip the brackets a URL puts around an IPv6 host. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The group `address` (an IP literal) belongs to, or `undefined` for a public address. */
export function privateNetworkOf(address: string): PrivateNetworkGroup | undefined {
  const ip = unbracket(address);
  const family = isIP(ip);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return GROUPS.find(({ list }) => list.check(ip, type))?.group;
}

/**
 * Networks the operator allows despite being non-public: group names
 * (`loopback`, `private`, …), CIDR ranges (`10.1.0.0/16`) and single addresses.
 */
export class PrivateNetworkAllowance {
  readonly #list = new BlockList();
  /** The entries as given, for messages and docs. */
  readonly entries: readonly string[];

  /** @throws RangeError naming the entry that is neither a group, an address nor a CIDR. */
  constructor(entries: readonly string[] = []) {
    this.entries = entries.map((entry) => entry.trim()).filter((entry) => entry !== '');
    for (const entry of this.entries) {
      if (isGroup(entry)) {
        for (const cidr of PRIVATE_NETWORK_GROUPS[entry]) addCidr(this.#list, cidr);
      } else {
        addCidr(this.#list, entry);
      }
    }
  }

  /** Whether `address` (an IP literal) is inside an allowed network. */
  allows(address: string): boolean {
    const ip = unbracket(address);
    const family = isIP(ip);
    return family !== 0 && this.#list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** Parse a comma-separated allowance (`loopback,10.0.0.0/8`), as in an environment variable. */
export function parsePrivateNetworkList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
