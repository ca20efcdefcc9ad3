// A real Express 5 seller on its own port, protected by the official @x402/express middleware
// with the `batch-settlement` scheme server, paid through an svc facilitator. Its routes, all
// priced 5000 per request:
//   GET /weather  charges the price;
//   GET /partial  charges 1200 of it (a settlement override);
//   GET /greedy   tries to charge 9000 (an override above the price);
//   GET /fail     answers 500 (a handler that failed).
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import type { FacilitatorClient } from '@x402/core/server';
import { BatchSettlementStellarScheme } from '../../src/batch-settlement/server.js';
import type { BatchSettlementStellarSchemeOptions } from '../../src/batch-settlement/server.js';

export const PRICE = 5000n;
const ROUTES = ['weather', 'partial', 'greedy', 'fail'] as const;
type Route = (typeof ROUTES)[number];

export interface BatchSeller {
  url: string;
  payTo: string;
  /** How many times a route's handler ran. */
  served(route?: Route): number;
  close(): Promise<void>;
}

export async function startBatchSeller(
  facilitator: FacilitatorClient,
  payTo: string,
  options: BatchSettlementStellarSchemeOptions = {},
): Promise<BatchSeller> {
  const resourceServer = new x402ResourceServer(facilitator).register(
    'stellar:local',
    new BatchSettlementStellarScheme(options),
  );
  const served = new Map<Route, number>(ROUTES.map((r) => [r, 0]));
  const count = (route: Route) => served.set(route, served.get(route)! + 1);
  const app = express();
  app.use(
    paymentMiddleware(
      Object.fromEntries(
        ROUTES.map((r) => [
          `GET /${r}`,
          {
            accepts: { scheme: 'batch-settlement', network: 'stellar:local', payTo, price: PRICE.toString() },
            description: `${r}, per request`,
          },
        ]),
      ),
      resourceServer,
    ),
  );
  app.get('/weather', (_req, res) => {
    count('weather');
    res.json({ city: 'Lisbon', forecast: 'sunny' });
  });
  app.get('/partial', (_req, res) => {
    count('partial');
    setSettlementOverrides(res, { amount: '1200' });
    res.json({ city: 'Lisbon', forecast: 'cloudy' });
  });
  app.get('/greedy', (_req, res) => {
    count('greedy');
    setSettlementOverrides(res, { amount: '9000' });
    res.json({ city: 'Lisbon', forecast: 'rain' });
  });
  app.get('/fail', (_req, res) => {
    count('fail');
    res.status(500).json({ error: 'the weather station is down' });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    payTo,
    served: (route) => (route ? served.get(route)! : [...served.values()].reduce((a, b) => a + b, 0)),
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
