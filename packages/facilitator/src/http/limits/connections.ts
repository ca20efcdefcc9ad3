// Open connections per client address and in total. Every socket costs a file
// descriptor: 1,100 idle sockets from one address once reached the open-file limit (1,024), and
// from then on every new connection failed for everyone. So a connection past CONN_MAX_PER_IP
// from its address, or past CONN_MAX_TOTAL in all, is answered at once, before Node's HTTP parser
// sees it, with a raw 429 and the error body (docs/protocol.md#errors), then closed. A trusted proxy
// (TRUST_PROXY) carries many clients on its connections: it is capped only in total.
//
//   limitConnections(app.server, { perIp: 128, total: 768, trusted: trustedPeer('') });
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { unmapped } from './trust-proxy.js';

/** A slot frees whenever another connection closes: worth retrying soon. */
export const RETRY_AFTER_SECONDS = 1;
/** How long a refused socket may read what its client sends, so the answer is not lost to a reset. */
const REFUSAL_LINGER_MS = 1_000;
/** Refused sockets lingering at once; past this (a flood) they are closed without an answer. */
const MAX_LINGERING = 64;

export interface ConnectionLimitOptions {
  /** Open connections per client address (0: no cap per address). */
  perIp: number;
  total: number;
  /** A trusted proxy's address: capped only in total. */
  trusted: (address: string) => boolean;
}

/**
 * Puts the caps in front of `server`'s own connection handling; call it before listen(). Node's
 * http.Server parses a socket from its 'connection' listener on, so the caps take that listener's
 * place and hand it only the sockets they admit.
 */
export function limitConnections(server: Server, o: ConnectionLimitOptions): void {
  const perIp = new Map<string, number>();
  let total = 0;
  let lingering = 0;
  const handlers = server.listeners('connection') as ((this: Server, socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress === undefined ? null : unmapped(socket.remoteAddress);
    if (ip === null) return void socket.destroy(); // already gone
    const capped = o.perIp > 0 && !o.trusted(ip);
    const mine = perIp.get(ip) ?? 0;
    const refusal =
      capped && mine >= o.perIp
        ? `Too many connections from ${ip}: at most ${o.perIp} open connections per address`
        : total >= o.total
          ? `Too many connections: at most ${o.total} open connections in all`
          : null;
    if (refusal) return void refuse(socket, `${refusal}; retry in ${RETRY_AFTER_SECONDS} s.`);
    total++;
    perIp.set(ip, mine + 1);
    socket.once('close', () => {
      total--;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left > 0) perIp.set(ip, left);
      else perIp.delete(ip);
    });
    for (const handle of handlers) handle.call(server, socket);
  });

  function refuse(socket: Socket, message: string): void {
    socket.on('error', () => {});
    const body = JSON.stringify({ error: 'RATE_LIMITED', source: 'facilitator', message });
    socket.end(
      `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `retry-after: ${RETRY_AFTER_SECONDS}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
    );
    if (lingering >= MAX_LINGERING) return void socket.destroy();
    // Closing with the client's request unread would reset the connection, and the client could
    // lose the answer: read and drop what it sends until it hangs up, for a second at most.
    lingering++;
    socket.once('close', () => lingering--);
    socket.on('data', () => {});
    socket.once('end', () => socket.destroy());
    socket.setTimeout(REFUSAL_LINGER_MS, () => socket.destroy());
  }
}
