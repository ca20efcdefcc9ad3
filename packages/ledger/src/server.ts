// The standalone ledger server: a LocalLedger behind its routes on a Fastify server, for setups
// where several facilitator processes share one ledger (docs/architecture.md#scale-out).
//
//   const server = await startLedgerServer({ host: '127.0.0.1', port: 4021, dataDir: './data', ledgerSeconds: 5 });
//   new HttpLedger({ url: server.url });   // server.url ends in /ledger
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { DEFAULT_LEDGER_HOST, DEFAULT_LEDGER_PORT } from './config.js';
import type { DexReserves } from './contracts.js';
import type { FaucetOptions } from './faucet.js';
import { LEDGER_BODY_LIMIT, ledgerRoutes, sendLedgerError } from './http-routes.js';
import type { Clock } from './ledger-clock.js';
import { LocalLedger } from './local-ledger.js';

export const LEDGER_PREFIX = '/ledger';
const REQUEST_TIMEOUT_MS = 30_000;

export interface LedgerServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 4021; 0 picks a free port. */
  port?: number;
  dataDir: string;
  ledgerSeconds?: number;
  clock?: Clock;
  faucet?: FaucetOptions;
  /** The DEX pool's genesis reserves (a new data directory only). */
  dexReserves?: DexReserves;
  /** Fastify's logger (warnings and errors only); off by default. */
  logger?: boolean;
}

export interface LedgerServer {
  /** Base URL of the ledger routes, `/ledger` included. */
  url: string;
  ledger: LocalLedger;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startLedgerServer(options: LedgerServerOptions): Promise<LedgerServer> {
  const host = options.host ?? DEFAULT_LEDGER_HOST;
  const ledger = await LocalLedger.open({
    dataDir: options.dataDir,
    ...(options.ledgerSeconds !== undefined ? { ledgerSeconds: options.ledgerSeconds } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.faucet ? { faucet: options.faucet } : {}),
    ...(options.dexReserves ? { dexReserves: options.dexReserves } : {}),
  });
  const app = Fastify({
    logger: options.logger ? { level: 'warn' } : false,
    bodyLimit: LEDGER_BODY_LIMIT,
    requestTimeout: REQUEST_TIMEOUT_MS,
    frameworkErrors: (err, _request, reply) => void sendLedgerError(reply, err),
  });
  try {
    await app.register(ledgerRoutes, { prefix: LEDGER_PREFIX, ledger });
    await app.listen({ host, port: options.port ?? DEFAULT_LEDGER_PORT });
  } catch (err) {
    await app.close();
    await ledger.close();
    throw err;
  }
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${port}${LEDGER_PREFIX}`,
    ledger,
    close: async () => {
      await app.close();
      await ledger.close();
    },
  };
}
