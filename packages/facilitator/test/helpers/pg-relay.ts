// A TCP relay in front of a PostgreSQL server, for tests of what the facilitator does when the
// path to its database misbehaves while no connection closes:
// - `silence()`: from then on nothing passes either way and new connections are refused, as in a
//   network partition;
// - `holdAfterStartup`: each connection's start-up passes (up to the server's first ReadyForQuery),
//   and then the server's bytes are held back for good — a server that accepts a connection and
//   never answers on it.
import net from 'node:net';

export interface PgRelay {
  url: string;
  silence(): void;
  close(): Promise<void>;
}

export async function startPgRelay(target: URL, o: { holdAfterStartup?: boolean } = {}): Promise<PgRelay> {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    const toServer = (d: Buffer) => void (silent || upstream.write(d));
    const toClient = o.holdAfterStartup
      ? untilReady((d) => void (silent || client.write(d)))
      : (d: Buffer) => void (silent || client.write(d));
    client.on('data', toServer);
    upstream.on('data', toClient);
    client.on('end', () => void (silent || upstream.end()));
    upstream.on('end', () => void (silent || client.end()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => {
      silent = true;
      server.close();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Passes the server's messages on up to and including its first ReadyForQuery ('Z'), then nothing. */
function untilReady(send: (d: Buffer) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let ready = false;
  return (chunk) => {
    if (ready) return;
    pending = Buffer.concat([pending, chunk]);
    // Backend messages: a type byte, then a 4-byte length that counts itself.
    let at = 0;
    while (!ready && pending.length - at >= 5) {
      const length = pending.readUInt32BE(at + 1);
      if (pending.length - at < 1 + length) break;
      ready = pending[at] === 'Z'.charCodeAt(0);
      at += 1 + length;
    }
    send(pending.subarray(0, at));
    pending = pending.subarray(at);
  };
}
