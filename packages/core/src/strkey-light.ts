// The StrKey check of a G… or C… address without the reference library, for the browser: the
// console checks addresses as it is given them, and @stellar/stellar-base would grow its bundle
// six times over. Same verdicts as strkey.ts's isAddress (test/strkey.test.ts compares them).
// SEP-0023: base32 (RFC 4648, no padding) of a version byte, 32 bytes of key, and a CRC16-XModem
// of those 33 bytes, little-endian.
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** Version bytes: ed25519 public key (G), contract (C). */
const VERSIONS: Record<string, number> = { G: 6 << 3, C: 2 << 3 };
const ADDRESS_RE = /^[GC][A-Z2-7]{55}$/;

function base32Decode(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 5) / 8));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const ch of text) {
    value = (value << 5) | BASE32.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out[at++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  return out;
}

function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** Whether `value` is a well-formed G… account or C… contract address, checksum included. */
export function isAddressLight(value: unknown): boolean {
  if (typeof value !== 'string' || !ADDRESS_RE.test(value)) return false;
  // 56 characters are exactly 35 bytes: version, 32 bytes of key, 2 of checksum.
  const bytes = base32Decode(value);
  if (bytes[0] !== VERSIONS[value[0] ?? '']) return false;
  const crc = crc16Xmodem(bytes.subarray(0, 33));
  return bytes[33] === (crc & 0xff) && bytes[34] === crc >> 8;
}
