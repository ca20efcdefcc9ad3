// The web console (packages/console), built by Vite into static files and served here: GET / is
// its index.html (no-cache, so a new build shows at once), GET /assets/:file its hashed scripts
// and styles (cached for a year, immutable: a new build has new names). Both are in the route
// table, hence in the OpenAPI document. Without a build the facilitator still starts, and GET /
// says how to make one. The page reads only this facilitator's own API, under its CSP.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, SvcError } from '@svc/core';
import { z } from 'zod';
import { defineRoute } from './route.js';
import type { AnyRoute } from './route.js';

/** Where `npm run build -w @svc/console` writes the console. */
/** packages/facilitator/console: where the console's build lands, and what the package ships. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console', import.meta.url));
export const INDEX_CACHE = 'no-cache';
const ASSET_MAX_AGE_MS = 365 * 24 * 3600 * 1000;
const NOT_BUILT =
  'The web console is not built. Build it with `npm run build -w @svc/console` (`npm start` builds it when needed), then reload.';

const AssetParams = z.object({
  file: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'file must be a file name of the console build')
    .meta({ description: 'A file of the console build (hashed name).' }),
});

/** Registers @fastify/static's sendFile and returns the console's two routes, serving `dist`. */
export async function consoleRoutes(app: FastifyInstance, dist: string = CONSOLE_DIST): Promise<AnyRoute[]> {
  await app.register(fastifyStatic, { serve: false });
  const assets = path.join(dist, 'assets');
  return [
    defineRoute({
      method: 'GET',
      url: '/',
      summary:
        'The web console: live payments, sellers, accounts, the float and the catalog, read from this API (HTML; the view and address are in the URL fragment).',
      tags: ['console'],
      responses: {
        200: {
          description: 'The console page (Cache-Control: no-cache)',
          schema: z.string(),
          contentType: 'text/html',
        },
        404: { description: 'The console is not built; the message says how to build it', schema: ErrorBodySchema },
      },
      handler: async ({ reply }) => {
        const html = await fs.readFile(path.join(dist, 'index.html'), 'utf8').catch(() => null);
        if (html === null) throw new SvcError('NOT_FOUND', NOT_BUILT);
        void reply.type('text/html; charset=utf-8').header('cache-control', INDEX_CACHE);
        return html;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/assets/:file',
      summary: 'A file of the web console build (JavaScript, CSS), immutable: its name changes with its content.',
      tags: ['console'],
      params: AssetParams,
      responses: {
        200: {
          description: 'The file, with its content type (Cache-Control: public, max-age=31536000, immutable)',
          contentType: 'application/octet-stream',
        },
        404: { description: 'No such file in the build', schema: ErrorBodySchema },
      },
      // send sets Cache-Control only on a file it found: a 404 is not cached for a year.
      handler: ({ params, reply }) =>
        reply.sendFile(params.file, assets, { maxAge: ASSET_MAX_AGE_MS, immutable: true, dotfiles: 'deny' }),
    }),
  ];
}
