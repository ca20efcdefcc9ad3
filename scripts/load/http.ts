// A small JSON client over node:http with keep-alive connections and a timeout on every request
// (node:http is several times cheaper than fetch per request, and the client shares the cores with
// the server under test). A reply of any status resolves; a network failure or timeout rejects.
import http from 'node:http';
import https from 'node:https';

export interface Reply {
  status: number;
  /** The parsed JSON body; null when there is none or it is not JSON. */
  body: unknown;
  retryAfter: string | null;
}

export class JsonClient {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    private readonly timeoutMs: number,
    maxSockets: number,
  ) {
    const options = { keepAlive: true, maxSockets };
    this.agents = { http: new http.Agent(options), https: new https.Agent(options) };
  }

  get(url: URL): Promise<Reply> {
    return this.request('GET', url, null, {});
  }

  post(url: URL, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    return this.request('POST', url, JSON.stringify(body ?? {}), headers);
  }

  /** Sends `payload` (already JSON) and resolves with the reply; rejects on a network error or timeout. */
  request(method: string, url: URL, payload: string | null, headers: Record<string, string>): Promise<Reply> {
    const secure = url.protocol === 'https:';
    const lib = secure ? https : http;
    const head: Record<string, string | number> = { accept: 'application/json', ...headers };
    if (payload !== null) {
      head['content-type'] = 'application/json';
      head['content-length'] = Buffer.byteLength(payload);
    }
    return new Promise<Reply>((resolve, reject) => {
      const req = lib.request(
        url,
        { method, headers: head, agent: secure ? this.agents.https : this.agents.http },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            clearTimeout(timer);
            const retryAfter = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              body: parseJson(Buffer.concat(chunks).toString('utf8')),
              retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            });
          });
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`timeout after ${this.timeoutMs} ms`)), this.timeoutMs);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(payload ?? undefined);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** A JSON object's field, or undefined. */
export function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

/** "CODE" of an error body, or "HTTP <status>". */
export function errorCode(reply: Reply): string {
  const code = field(reply.body, 'error');
  return typeof code === 'string' ? code : `HTTP ${reply.status}`;
}
