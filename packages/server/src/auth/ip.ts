import net from 'node:net';

/** True when `address` equals one of `trusted` (exact addresses or CIDR ranges, v4 or v6). */
export function isTrustedAddress(address: string, trusted: string[]): boolean {
  return trustedAddresses(trusted)(address);
}

/** `isTrustedAddress` with the list compiled once, for checks made on every connection. */
export function trustedAddresses(trusted: string[]): (address: string) => boolean {
  const list = new net.BlockList();
  for (const entry of trusted) {
    const [ip, bits] = entry.split('/');
    if (!ip) continue;
    const type = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return (address) => {
    // A link-local address may carry its interface (`fe80::1%eth0`), which the list does not take.
    const bare = address.replace(/%.*$/, '');
    const addr = bare.startsWith('::ffff:') && net.isIPv4(bare.slice(7)) ? bare.slice(7) : bare;
    const type = net.isIPv6(addr) ? 'ipv6' : net.isIPv4(addr) ? 'ipv4' : undefined;
    return type !== undefined && list.check(addr, type);
  };
}

export const LOOPBACK = ['127.0.0.0/8', '::1'];

/**
 * The address attempts are counted against: an IPv4 address as is, an IPv6 address by its /64
 * network, since one subscriber is commonly given a whole /64 and could otherwise change address
 * for every guess.
 */
export function addressKey(address: string | undefined): string {
  // A client of a unix socket (--socket) has no address: Fastify's request.ip is undefined.
  if (!address) return 'unix-socket';
  const bare = address.replace(/%.*$/, '');
  if (bare.startsWith('::ffff:') && net.isIPv4(bare.slice(7))) return bare.slice(7);
  if (!net.isIPv6(bare)) return bare;
  const groups = expandIPv6(bare);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, as lower-case hex without leading zeros. */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16).toString(16));
}
