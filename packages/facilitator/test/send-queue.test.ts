// The kernel's send queue of a socket, read from /proc/net/tcp{,6} (Linux): what an event stream
// whose client never reads leaves in the kernel, over IPv4, IPv6 and IPv4-mapped IPv6.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ProcSendQueues, parseTable, socketKey } from '../src/http/send-queue.js';

const LINUX = process.platform === 'linux';

/** A server on `listen` that sends 1 MB to a client that never reads; resolves the server's side. */
async function stuck(listen: string, connect: string): Promise<{ socket: net.Socket; close(): void }> {
  let socket: net.Socket | null = null;
  const server = net.createServer((s) => {
    socket = s;
    s.on('error', () => {});
    s.write(Buffer.alloc(1_000_000));
  });
  await new Promise<void>((r) => server.listen(0, listen, r));
  const client = net.connect({ port: (server.address() as AddressInfo).port, host: connect });
  client.on('error', () => {});
  client.pause();
  await new Promise((r) => client.once('connect', r));
  while (!socket) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
  return { socket, close: () => (client.destroy(), server.close()) };
}

describe('ProcSendQueues', () => {
  it.runIf(LINUX).each([
    ['IPv4', '127.0.0.1', '127.0.0.1'],
    ['IPv6', '::1', '::1'],
    ['IPv4-mapped IPv6', '::', '127.0.0.1'],
  ])('reads what the kernel holds for a peer that does not read (%s)', async (_name, listen, connect) => {
    const s = await stuck(listen, connect);
    try {
      const queue = (await new ProcSendQueues().read([s.socket]))(s.socket);
      // The peer's receive buffer took its share; the rest waits in ours, none of it in the process.
      expect(s.socket.writableLength).toBe(0);
      expect(queue).toBeGreaterThan(100_000);
      expect(queue).toBeLessThanOrEqual(1_000_000);
    } finally {
      s.close();
    }
  });

  it.runIf(os.endianness() === 'LE')(
    'names a socket as /proc does: each 32-bit word of an address in host order, ports in hex',
    () => {
      expect(
        socketKey({ localAddress: '127.0.0.1', localPort: 4020, remoteAddress: '192.0.2.10', remotePort: 51000 }),
      ).toBe('0100007F:0FB4 0A0200C0:C738');
      expect(
        socketKey({
          localAddress: '::ffff:127.0.0.1',
          localPort: 80,
          remoteAddress: '2001:db8::1%eth0',
          remotePort: 1,
        }),
      ).toBe('0000000000000000FFFF00000100007F:0050 B80D0120000000000000000001000000:0001');
      expect(socketKey({ localAddress: undefined, localPort: 1, remoteAddress: '::1', remotePort: 2 })).toBeNull();
    },
  );

  it('reads the wanted lines of a table', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:0FB4 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0',
      '   1: 0100007F:0FB4 0200007F:C350 01 002BBC40:00000000 01:00000014 00000000  1000        0 2 1 0 20 4 30 10 -1',
      '   2: 0100007F:0FB4 0300007F:C351 01 00000010:00000000 01:00000014 00000000  1000        0 3 1 0 20 4 30 10 -1',
      '',
    ].join('\n');
    const all = new Map<string, number>();
    parseTable(table, all);
    expect(all).toEqual(
      new Map([
        ['0100007F:0FB4 00000000:0000', 0],
        ['0100007F:0FB4 0200007F:C350', 0x2bbc40],
        ['0100007F:0FB4 0300007F:C351', 16],
      ]),
    );
    const one = new Map<string, number>();
    parseTable(table, one, new Set(['0100007F:0FB4 0300007F:C351']));
    expect(one).toEqual(new Map([['0100007F:0FB4 0300007F:C351', 16]]));
  });
});
