// A real Express 5 seller on its own port, protected by the official @x402/express middleware
// with the svc `channel` scheme server.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import type { FacilitatorClient } from '@x402/core/server';
import { ChannelSchemeServer } from '../../src/index.js';

export interface Seller {
  url: string;
  payTo: string;
  /** How many times the paid handler ran. */
  served(): number;
  close(): Promise<void>;
}

export async function startSeller(facilitator: FacilitatorClient, payTo: string, price = '$0.0005'): Promise<Seller> {
  const resourceServer = new x402ResourceServer(facilitator).register('stellar:local', new ChannelSchemeServer());
  const app = express();
  let served = 0;
  app.use(
    paymentMiddleware(
      {
        'GET /weather': {
          accepts: { scheme: 'channel', network: 'stellar:local', payTo, price },
          description: 'Weather, per request',
        },
      },
      resourceServer,
    ),
  );
  app.get('/weather', (_req, res) => {
    served++;
    res.json({ city: 'Lisbon', forecast: 'sunny' });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    payTo,
    served: () => served,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
