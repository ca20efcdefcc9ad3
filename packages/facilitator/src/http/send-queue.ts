// What the kernel still holds of what a socket was given to send: bytes not yet sent or not yet
// acknowledged by the peer. A client that stops reading fills its own receive buffer, then ours:
// on loopback each socket absorbed ~3.8 MB before anything stayed in the process,
// so a feed that looks only at Node's writableLength sees nothing wrong for megabytes. On Linux
// the `tx_queue` of /proc/net/tcp and /proc/net/tcp6 says it; elsewhere it reads as 0 and only
// what waits in the process counts.
//
//   const queues = await new ProcSendQueues().read([socket]);
//   queues(socket); // bytes
import fs from 'node:fs';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import os from 'node:os';

const FILES = ['/proc/net/tcp', '/proc/net/tcp6'];
/** /proc prints each 32-bit word of an address in the host's byte order. */
const LITTLE_ENDIAN = os.endianness() === 'LE';

export interface SendQueues {
  /** A snapshot for `sockets`: the bytes the kernel holds for each (0 when not known). */
  read(sockets: readonly Socket[]): Promise<(socket: Socket) => number>;
}

export class ProcSendQueues implements SendQueues {
  private available = process.platform === 'linux';

  async read(sockets: readonly Socket[]): Promise<(socket: Socket) => number> {
    if (!this.available) return () => 0;
    const wanted = new Set(sockets.map(socketKey).filter((k) => k !== null));
    const texts = await Promise.all(FILES.map((file) => fs.promises.readFile(file, 'utf8').catch(() => null)));
    if (texts.every((t) => t === null)) {
      this.available = false; // not there: not worth asking again
      return () => 0;
    }
    const queues = new Map<string, number>();
    for (const text of texts) if (text !== null) parseTable(text, queues, wanted);
    return (socket) => {
      const key = socketKey(socket);
      return key === null ? 0 : (queues.get(key) ?? 0);
    };
  }
}

/**
 * `local_address rem_address` → tx_queue, for the lines of a /proc/net/tcp table whose key is
 * `wanted` (every line without it). The table lists every socket of the host's network namespace,
 * thousands on a busy one: it is scanned in place, without splitting it into lines and fields.
 */
export function parseTable(text: string, into: Map<string, number>, wanted?: ReadonlySet<string>): void {
  for (let at = text.indexOf('\n') + 1; at > 0 && at < text.length;) {
    const end = text.indexOf('\n', at);
    const lineEnd = end === -1 ? text.length : end;
    // "  12: LOCAL:PORT REMOTE:PORT ST TX:RX …"
    const key = text.indexOf(': ', at) + 2;
    const remoteEnd = key > 1 && key < lineEnd ? text.indexOf(' ', text.indexOf(' ', key) + 1) : -1;
    if (remoteEnd > 0 && remoteEnd < lineEnd) {
      const name = text.slice(key, remoteEnd);
      if (!wanted || wanted.has(name)) {
        const tx = remoteEnd + 4; // past " ST "
        into.set(name, parseInt(text.slice(tx, text.indexOf(':', tx)), 16) || 0);
      }
    }
    at = lineEnd + 1;
  }
}

/** A socket's key in those tables (`0100007F:1F90 0200007F:C350`), or null when it has no addresses. */
export function socketKey(
  socket: Pick<Socket, 'localAddress' | 'localPort' | 'remoteAddress' | 'remotePort'>,
): string | null {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (!localAddress || !remoteAddress || localPort === undefined || remotePort === undefined) return null;
  return `${procAddress(localAddress)}:${procPort(localPort)} ${procAddress(remoteAddress)}:${procPort(remotePort)}`;
}

function procPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}

function procAddress(address: string): string {
  const bytes = isIP(address) === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    for (const b of LITTLE_ENDIAN ? word.reverse() : word) out += b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** The 16 bytes of an IPv6 address, `::` and a dotted IPv4 tail included. */
function ipv6Bytes(text: string): number[] {
  let address = text.split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  if (dotted) address = `${address.slice(0, -dotted.length)}0:0`;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16) || 0;
    return [n >> 8, n & 255];
  });
  if (dotted) bytes.splice(12, 4, ...dotted.split('.').map(Number));
  return bytes;
}
