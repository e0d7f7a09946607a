import net from 'node:net';

/** True when `address` equals one of `trusted` (exact addresses or CIDR ranges, v4 or v6). */
export function isTrustedAddress(address: string, trusted: string[]): boolean {
  const addr = address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
  const list = new net.BlockList();
  for (const entry of trusted) {
    const [ip, bits] = entry.split('/');
    if (!ip) continue;
    const type = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list.check(addr, net.isIPv6(addr) ? 'ipv6' : 'ipv4');
}

export const LOOPBACK = ['127.0.0.0/8', '::1'];
