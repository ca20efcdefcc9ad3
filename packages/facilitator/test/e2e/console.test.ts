// The web console as the facilitator serves it: GET / is the build's index.html (no-cache, under
// the CSP), GET /assets/:file its hashed files (immutable), API routes are untouched, both routes
// are documented, and without a build the facilitator starts and GET / says how to make one.
// A small build stands in for the real one here; the real page runs in packages/console/test.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';

const INDEX =
  '<!doctype html><title>console</title><script type="module" crossorigin src="/assets/index-Ab12Cd.js"></script>';
const SCRIPT = 'document.title = "console";\n';

function statusOf(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => resolve(res.resume().statusCode)).on('error', reject);
  });
}

interface Served {
  url: string;
  close(): Promise<void>;
}

async function serve(consoleDir: string): Promise<Served> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-'));
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', LEDGER_SECONDS: '1', DEMO_SEED: '0' });
  const f = await createFacilitator({ config, consoleDir, watchPollMs: 50 });
  const url = await f.listen();
  return {
    url,
    async close() {
      await f.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('the console, built', () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-dist-'));
  let s: Served;
  beforeAll(async () => {
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), INDEX);
    fs.writeFileSync(path.join(dist, 'assets', 'index-Ab12Cd.js'), SCRIPT);
    fs.writeFileSync(path.join(dist, 'assets', 'index-Ef34Gh.css'), 'body { margin: 0 }\n');
    fs.writeFileSync(path.join(dist, 'secret.txt'), 'not an asset');
    s = await serve(dist);
  });
  afterAll(async () => {
    await s.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('answers GET / with index.html, not cached, under the CSP (scripts from this origin only, no framing)', async () => {
    const res = await fetch(`${s.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await res.text()).toBe(INDEX);
  });

  it('answers GET /assets/:file with the file, its type, and a year of immutable caching', async () => {
    const js = await fetch(`${s.url}/assets/index-Ab12Cd.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(application|text)\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('etag')).toBeTruthy();
    expect(await js.text()).toBe(SCRIPT);
    const css = await fetch(`${s.url}/assets/index-Ef34Gh.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    // A browser revalidates with If-None-Match (fetch() would add Cache-Control: no-cache, hence node:http).
    expect(await statusOf(`${s.url}/assets/index-Ab12Cd.js`, { 'if-none-match': js.headers.get('etag')! })).toBe(304);
  });

  it('serves nothing else: an unknown asset is a 404 error body (not cached), a path outside assets/ is refused', async () => {
    const missing = await fetch(`${s.url}/assets/index-Zz99.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBeNull();
    expect(((await missing.json()) as { error: string }).error).toBe('NOT_FOUND');
    for (const p of ['/assets/..%2Fsecret.txt', '/assets/.hidden', '/secret.txt', '/index.html', '/assets/']) {
      const res = await fetch(`${s.url}${p}`);
      expect([400, 404], p).toContain(res.status);
      expect(await res.text(), p).not.toContain('not an asset');
    }
  });

  it('leaves the API as it was', async () => {
    const stats = await fetch(`${s.url}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.headers.get('content-type')).toMatch(/^application\/json/);
    const unknown = await fetch(`${s.url}/nope`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toBe('NOT_FOUND');
  });

  it('documents GET / and GET /assets/{file} in the OpenAPI document and llms.txt', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    expect(Object.keys(doc.paths['/']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/']!['get']!.responses['200']!.content!)).toEqual(['text/html']);
    expect(Object.keys(doc.paths['/assets/{file}']!)).toEqual(['get']);
    const llms = await (await fetch(`${s.url}/llms.txt`)).text();
    expect(llms).toContain('- GET /: The web console');
  });
});

describe('the console, not built', () => {
  it('starts anyway, and GET / says how to build the console', async () => {
    const s = await serve(path.join(os.tmpdir(), 'svc-no-console-here'));
    try {
      const res = await fetch(`${s.url}/`);
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: string; source: string; message: string };
      expect(body).toMatchObject({ error: 'NOT_FOUND', source: 'facilitator' });
      expect(body.message).toContain('npm run build -w @svc/console');
      expect(body.message).not.toContain(os.tmpdir());
      expect((await fetch(`${s.url}/assets/index-Ab12Cd.js`)).status).toBe(404);
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
