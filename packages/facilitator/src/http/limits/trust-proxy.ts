// TRUST_PROXY read for the connection caps: whether the peer of a socket is a trusted proxy (its
// connections carry many clients, so it is capped only in total). The same value configures
// Fastify's request.ip (app.ts: trustProxyOption): empty or `false` trusts nobody; `true` and a
// hop count trust the peer itself; otherwise a comma-separated list of addresses, CIDRs
// (`10.0.0.0/8`, `10.0.0.0/255.0.0.0`) and the names `loopback`, `linklocal`, `uniquelocal`.
import { BlockList, isIP } from 'node:net';

const NAMED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Whether `value` is a TRUST_PROXY setting this module and Fastify both understand. */
export function isTrustProxyValue(value: string): boolean {
  if (value === '' || value === 'true' || value === 'false' || /^\d+$/.test(value)) return true;
  return value.split(',').every((entry) => subnets(entry.trim()) !== null);
}

/** `(address) => trusted`, for a socket's remote address (IPv4-mapped IPv6 included). */
export function trustedPeer(value: string): (address: string) => boolean {
  if (value === '' || value === 'false' || value === '0') return () => false;
  if (value === 'true' || /^\d+$/.test(value)) return () => true;
  const list = new BlockList();
  for (const entry of value.split(',')) {
    for (const [address, prefix, family] of subnets(entry.trim()) ?? []) list.addSubnet(address, prefix, family);
  }
  return (address) => {
    const plain = unmapped(address);
    const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
    return isIP(plain) !== 0 && list.check(plain, family);
  };
}

/** `::ffff:192.0.2.1` → `192.0.2.1`: the same client whether the server listens on IPv4 or IPv6. */
export function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

type Subnet = [address: string, prefix: number, family: 'ipv4' | 'ipv6'];

function subnets(entry: string): Subnet[] | null {
  const named = NAMED[entry];
  if (named) return named.map((cidr) => subnets(cidr)![0]!);
  const [address = '', mask, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const bits = version === 4 ? 32 : 128;
  if (mask === undefined) return [[address, bits, family]];
  const prefix = /^\d{1,3}$/.test(mask) ? Number(mask) : version === 4 ? netmaskPrefix(mask) : null;
  return prefix !== null && prefix <= bits ? [[address, prefix, family]] : null;
}

/** `255.255.0.0` → 16; null when not a contiguous IPv4 netmask. */
function netmaskPrefix(mask: string): number | null {
  if (isIP(mask) !== 4) return null;
  const bits = mask
    .split('.')
    .map((o) => Number(o).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits) ? (bits.indexOf('0') === -1 ? 32 : bits.indexOf('0')) : null;
}
