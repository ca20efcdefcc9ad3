// Redis for tests (the rate limiter's shared backend). Without a server, Redis tests skip LOUDLY
// on a developer machine and fail in CI (CI=true), like the PostgreSQL ones.
import net from 'node:net';
import { inCi } from './pg.js';

const DEFAULT_URL = 'redis://127.0.0.1:6379';

export function redisTestUrl(): string {
  return process.env['SVC_TEST_REDIS_URL'] ?? DEFAULT_URL;
}

async function redisAnswers(): Promise<boolean> {
  const { hostname, port } = new URL(redisTestUrl());
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname, () => socket.end('PING\r\n'));
    socket.setTimeout(2000, () => socket.destroy());
    socket.on('data', (d: Buffer) => resolve(d.toString().startsWith('+PONG')));
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

export async function redisEnabled(): Promise<boolean> {
  if (inCi()) return true;
  if (await redisAnswers()) return true;
  console.warn(
    [
      '',
      '#'.repeat(78),
      `#  REDIS TESTS SKIPPED: no server answers at ${redisTestUrl()}`,
      '#  with CI=true these tests run and fail instead of skipping.',
      '#'.repeat(78),
      '',
    ].join('\n'),
  );
  return false;
}
